"""Figures: decompilation errors, the lattice of named structures, tabular training curves (and its data)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.dpa_logic.figures import make_figures

make_figures(
    semantics_json=snakemake.input.semantics,
    tabular_files={p: list(f) for p, f in snakemake.params.tabular.items()},
    decompile_png=snakemake.output.decompile,
    lattice_png=snakemake.output.lattice,
    training_png=snakemake.output.training,
    accuracy_csv=snakemake.output.accuracy,
)
