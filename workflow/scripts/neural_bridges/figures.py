"""Figures: bridge sample paths per method, marginals against the closed form (every seed group, in seed order)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.neural_bridges.figures import figures_job

figures_job(
    linear_npz={p: list(snakemake.input[f"linear_{p}"]) for p in snakemake.params.processes},
    cell_npz={e: list(snakemake.input[f"cell_{e}"]) for e in snakemake.params.events},
    linear_png=snakemake.output.linear,
    cell_png=snakemake.output.cell,
    linear_csv=snakemake.output.linear_data,
)
