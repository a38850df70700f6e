"""Outcomes over time per design, the quantity-quality scatter, and the sensitivity sweep."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.human_data.pipeline import make_figures

make_figures(
    metrics_json=snakemake.input.metrics,
    curves_npz=snakemake.input.curves,
    time_png=snakemake.output.over_time,
    frontier_png=snakemake.output.frontier,
    sweep_png=snakemake.output.sweep,
)
