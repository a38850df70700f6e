"""Closed-form bridge (Brownian or OU), one seed group: neural bridge, guided proposal and exact theta*."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.neural_bridges.experiments import linear_job

linear_job(
    process=snakemake.wildcards.process,
    spec=dict(snakemake.params.spec),
    eps=snakemake.params.eps,
    seeds=list(snakemake.params.seeds),
    hidden=list(snakemake.params.hidden),
    train=dict(snakemake.params.train),
    n_eval=snakemake.params.n_eval,
    eval_times=list(snakemake.params.eval_times),
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    out_npz=snakemake.output.arrays,
    device=job_device(snakemake.resources),
)
