"""Experiment 1: attention maps optimised directly under the common and the non-local energy."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.winwinlay.toy_step import toy_job

toy_job(
    seeds=list(snakemake.params.seeds),
    cfg=dict(snakemake.params.toy),
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    out_npz=snakemake.output.arrays,
)
