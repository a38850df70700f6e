"""The Bradley-Terry (trajectory preference) version of the outcome-to-process reduction, one MDP family."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.outcome_process.jobs import preference_experiment

preference_experiment(
    family=snakemake.wildcards.family,
    spec=dict(snakemake.params.spec),
    eps=snakemake.params.eps,
    seeds=list(snakemake.params.seeds),
    n_grid=list(snakemake.params.n_grid),
    beta=snakemake.params.beta,
    bt=dict(snakemake.params.bt),
    out_json=snakemake.output.metrics,
)
