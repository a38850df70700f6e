"""Pre-train GET on a domain's sequences: NTP (decoder) or SMTP (encoder)."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.graphgpt.pipeline import pretrain_model

pretrain_model(
    pool_path=snakemake.input.pool,
    objective=snakemake.wildcards.objective,
    model_params=snakemake.params.model,
    train_params=snakemake.params.train,
    seed=snakemake.params.seed,
    ckpt_path=snakemake.output.ckpt,
    history_path=snakemake.output.history,
)
