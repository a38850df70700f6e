"""Figures: mixing vs alpha, sample quality vs m, and the exact enumeration of the one-stage chain."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.binary_denoising.figures import plot_exact, plot_mixing, plot_quality

datasets = snakemake.params.datasets
n_seeds = snakemake.params.n_seeds
digits = list(snakemake.input.digits)
plot_mixing(list(snakemake.input.mixture), snakemake.output.mixing)
plot_quality(
    list(snakemake.input.mixture),
    {ds: digits[i * n_seeds : (i + 1) * n_seeds] for i, ds in enumerate(datasets)},
    snakemake.output.quality,
    snakemake.output.quality_data,
)
plot_exact(list(snakemake.input.exact), snakemake.output.exact)
