"""Sub-optimality vs number of trajectories for one MDP family: outcome reduction, process, oracle."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.outcome_process.jobs import rate_experiment

rate_experiment(
    family=snakemake.wildcards.family,
    spec=dict(snakemake.params.spec),
    eps=snakemake.params.eps,
    seeds=list(snakemake.params.seeds),
    n_grid=list(snakemake.params.n_grid),
    beta=snakemake.params.beta,
    lsq=dict(snakemake.params.lsq),
    out_json=snakemake.output.metrics,
)
