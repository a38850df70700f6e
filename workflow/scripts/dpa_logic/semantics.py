"""Decompiled losses vs their closed forms, the lattice sizes and the entailment order."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.dpa_logic.experiments import semantics_experiment

sem = dict(snakemake.params.semantics)
semantics_experiment(
    n_points=sem["n_points"],
    seed=sem["seed"],
    lattice_max_n=sem["lattice_max_n"],
    order_points=sem["order_points"],
    out_json=snakemake.output.metrics,
)
