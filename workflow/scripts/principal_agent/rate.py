"""Known greedy responses: regret vs T of the configured algorithms under one adversary."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.principal_agent.jobs import run_rate

run_rate(
    adversary=snakemake.wildcards.pa_adversary,
    algorithms=snakemake.params.algorithms,
    n_arms=snakemake.params.n_arms,
    n_types=snakemake.params.n_types,
    horizons=snakemake.params.horizons,
    seeds=snakemake.params.seeds,
    adversary_params=snakemake.params.adversary_params,
    out_json=snakemake.output.records,
    group=snakemake.wildcards.seeds,
)
