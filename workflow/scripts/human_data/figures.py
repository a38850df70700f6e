"""Outcomes over time per design, the quantity-quality scatter, and the sensitivity sweep."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.human_data.figures import make_figures

make_figures(
    simulation_files=list(snakemake.input.outcomes),
    curves_files=list(snakemake.input.curves),
    time_png=snakemake.output.over_time,
    time_csv=snakemake.output.over_time_data,
    frontier_png=snakemake.output.frontier,
    sweep_png=snakemake.output.sweep,
)
