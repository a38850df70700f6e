"""Figures: correlation and max alignment vs uniqueness per heterogeneity; alignment vs accuracy."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.mm_alignment.figures import figures_job

figures_job(
    synthetic_json={u: snakemake.input[f"synthetic_U{u}"] for u in snakemake.params.uniqueness},
    real_json=snakemake.input.real,
    correlation_png=snakemake.output.correlation,
    scatter_png=snakemake.output.scatter,
)
