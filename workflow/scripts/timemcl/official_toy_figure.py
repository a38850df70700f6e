"""Figure of the authors' Brownian toy: heads vs the k-means quantizer, scores vs Voronoi-cell masses."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.timemcl.figures import plot_official_toy_for

plot_official_toy_for(official_json=snakemake.input.metrics, out_png=snakemake.output.figure)
