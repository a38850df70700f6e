"""Slopes with bootstrap intervals, bound ratios and comparisons from every simulation's records."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.principal_agent.summary import analyse

analyse(
    rate_files=list(snakemake.input.rate),
    sweep_files=list(snakemake.input.sweep),
    lipschitz_files=list(snakemake.input.lipschitz),
    lower_bound_files=list(snakemake.input.lower_bound),
    multiarm_files=list(snakemake.input.multiarm),
    two_point_files=list(snakemake.input.two_point),
    hidden_subset_files=list(snakemake.input.hidden_subset),
    zooming_files=list(snakemake.input.zooming),
    n_boot=snakemake.params.n_boot,
    level=snakemake.params.level,
    out_json=snakemake.output.summary,
)
