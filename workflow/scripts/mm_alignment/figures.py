"""Figures: correlation and max alignment vs uniqueness per heterogeneity (and its data as CSV);
alignment vs accuracy."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.mm_alignment.figures import figures_job

figures_job(
    synthetic_json={u: list(snakemake.input[f"synthetic_U{u}"]) for u in snakemake.params.uniqueness},
    real_json=list(snakemake.input.real),
    correlation_png=snakemake.output.correlation,
    scatter_png=snakemake.output.scatter,
    correlation_csv=snakemake.output.correlation_data,
)
