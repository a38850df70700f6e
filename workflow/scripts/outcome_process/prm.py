"""Process reward models: A^mu vs Q^mu of a sub-optimal policy mu, exact and from rollouts."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.outcome_process.jobs import prm_experiment

prm_experiment(
    families=list(snakemake.params.families),
    specs={k: dict(v) for k, v in snakemake.params.specs.items()},
    eps=snakemake.params.eps,
    n_instances=snakemake.params.n_instances,
    rollouts=list(snakemake.params.rollouts),
    out_json=snakemake.output.metrics,
)
