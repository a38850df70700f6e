"""Figures: return curves with bands; 2-D projection of real vs generated transitions."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.cfdg.pipeline import figures_job

figures_job(
    o2o_npz={n: snakemake.input[f"o2o_{n}"] for n in snakemake.params.datasets},
    quality_npz=snakemake.input.quality,
    curves_png=snakemake.output.returns,
    projection_png=snakemake.output.projection,
)
