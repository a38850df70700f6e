"""Train the small Llama on the synthetic long-context tasks (local, recall, copy), on the job's device."""

import sys
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.alspec.tasks import train_model
from methods.common.device import job_device

p = snakemake.params
train_model(
    tasks=p.tasks,
    model=p.model,
    train=p.train,
    sink=p.sink,
    window=p.window,
    seed=p.seed,
    out_dir=str(Path(snakemake.output.config).parent),
    info_path=snakemake.output.info,
    threads=snakemake.threads,
    device=job_device(snakemake.resources),
)
