"""Pre-train GET for one pre-trained model ({model} wildcard) on a domain's sequences: SMTP (encoder) or NTP (decoder)."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.graphgpt.pipeline import pretrain_model

pretrain_model(
    pool_path=snakemake.input.pool,
    model_name=snakemake.wildcards.model,
    model_params=snakemake.params.model,
    train_params=snakemake.params.train,
    smtp=snakemake.params.smtp,
    seed=snakemake.params.seed,
    ckpt_path=snakemake.output.ckpt,
    history_path=snakemake.output.history,
)
