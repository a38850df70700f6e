"""Regret on the lower-bound family for known greedy responses over a K x N grid (hidden-subset family), every
seed of one seed group."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.principal_agent.lower_bound_kn import hidden_subset_job

hidden_subset_job(
    params=dict(snakemake.params.experiment),
    seeds=list(snakemake.params.seeds),
    out_json=snakemake.output.metrics,
)
