"""Figures: return curves with bands (every seed group); 2-D projection of real vs generated transitions."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.cfdg.figures import figures_job

figures_job(
    o2o_npz={n: list(snakemake.input[f"o2o_{n}"]) for n in snakemake.params.datasets},
    quality_npz=list(snakemake.input.quality),
    curves_png=snakemake.output.returns,
    projection_png=snakemake.output.projection,
    curves_csv=snakemake.output.returns_data,
)
