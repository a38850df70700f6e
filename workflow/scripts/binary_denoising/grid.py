"""Sample grid of one digits dataset (first seed): rows m = 1..m_max, last row held-out data."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.binary_denoising.figures import plot_sample_grid

plot_sample_grid(snakemake.input.samples, snakemake.wildcards.bd_dataset, snakemake.output.figure)
