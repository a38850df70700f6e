"""One seed of the Bernoulli-mixture experiment: denoiser error, mixing vs alpha, quality vs m."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.binary_denoising.experiments import run_mixture
from methods.common.device import job_device

run_mixture(
    seed=int(snakemake.wildcards.bd_seed),
    mix=snakemake.params.mixture,
    model=snakemake.params.model,
    train=snakemake.params.train,
    sampling=snakemake.params.sampling,
    out_json=snakemake.output.metrics,
    device=job_device(snakemake.resources),
    threads=snakemake.threads,
)
