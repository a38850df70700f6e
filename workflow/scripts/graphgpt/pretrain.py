"""Pre-train GET for every model of one group ({domain}, {models} wildcards): SMTP (encoder) or NTP
(decoder); a resubmitted job resumes from its last checkpoint."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.graphgpt.pretraining import pretrain_domain

pretrain_domain(
    pool_paths={s: snakemake.input[s] for s in ("eulerian", "edgelist") if snakemake.input.get(s)},
    models=list(snakemake.params.models),
    model_params=snakemake.params.model,
    train_params=snakemake.params.train,
    smtp=snakemake.params.smtp,
    seed=snakemake.params.seed,
    ckpt_path=snakemake.output.ckpt,
    history_path=snakemake.output.history,
    device=job_device(snakemake.resources),
    threads=snakemake.threads,
)
