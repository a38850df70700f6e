"""Exact enumeration of the one-stage chain (contraction rate, stationary-law bias) for the mixture of every seed
of one seed group."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.binary_denoising.exact import exact_chain_job

exact_chain_job(
    params=dict(snakemake.params.exact),
    seeds=list(snakemake.params.seeds),
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
)
