"""Known greedy responses, general (multi-arm) incentives: regret vs T."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.principal_agent.jobs import run_multiarm

run_multiarm(
    adversary=snakemake.params.adversary,
    horizons=snakemake.params.horizons,
    seeds=snakemake.params.seeds,
    n_arms=snakemake.params.n_arms,
    n_types=snakemake.params.n_types,
    adversary_params=snakemake.params.adversary_params,
    out_json=snakemake.output.records,
    group=snakemake.wildcards.seeds,
)
