"""Exact / static / ALSpec at every λ on one synthetic task ({alspec_task} wildcard), on the job's device."""

import sys
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.alspec.evaluate import evaluate_task
from methods.common.device import job_device

p = snakemake.params
evaluate_task(
    model_dir=str(Path(snakemake.input.config).parent),
    task=snakemake.wildcards.alspec_task,
    tasks=p.tasks,
    sink=p.sink,
    window=p.window,
    lams=p.lams,
    granularity=p.granularity,
    n_examples=p.eval["n_examples"],
    batch_size=p.eval["batch_size"],
    seed=p.seed,
    metrics_path=snakemake.output.metrics,
    threads=snakemake.threads,
    device=job_device(snakemake.resources),
    n_draws=p.draws,
)
