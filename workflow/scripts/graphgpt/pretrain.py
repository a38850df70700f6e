"""Pre-train GET for every pre-trained model of one domain ({domain} wildcard): SMTP (encoder) or NTP (decoder)."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.graphgpt.pipeline import pretrain_domain

pretrain_domain(
    pool_paths={s: snakemake.input[s] for s in ("eulerian", "edgelist") if snakemake.input.get(s)},
    models=list(snakemake.params.models),
    model_params=snakemake.params.model,
    train_params=snakemake.params.train,
    smtp=snakemake.params.smtp,
    seed=snakemake.params.seed,
    ckpt_path=snakemake.output.ckpt,
    history_path=snakemake.output.history,
)
