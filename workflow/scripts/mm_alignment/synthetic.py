"""Controlled generator at one uniqueness level: encoders of every depth, alignment and accuracy (one seed group)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.mm_alignment.experiments import synthetic_job

synthetic_job(
    uniqueness=int(snakemake.wildcards.u),
    hetero_depths=list(snakemake.params.hetero_depths),
    seeds=list(snakemake.params.seeds),
    generator=dict(snakemake.params.generator),
    encoder=dict(snakemake.params.encoder),
    train=dict(snakemake.params.train),
    train_fixed=dict(snakemake.params.train_fixed),
    align=dict(snakemake.params.align),
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    device=job_device(snakemake.resources),
)
