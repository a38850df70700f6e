"""One seed of the Bernoulli-mixture experiment: denoiser error, mixing vs alpha, quality vs m."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.binary_denoising.pipeline import run_mixture

run_mixture(
    seed=int(snakemake.wildcards.bd_seed),
    mix=snakemake.params.mixture,
    model=snakemake.params.model,
    train=snakemake.params.train,
    sampling=snakemake.params.sampling,
    out_json=snakemake.output.metrics,
)
