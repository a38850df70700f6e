"""Known greedy responses: regret vs N or vs K at the sweep horizons."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.principal_agent.jobs import run_sweep

run_sweep(
    dimension=snakemake.wildcards.pa_dimension,
    algorithms=snakemake.params.algorithms,
    values=snakemake.params.values,
    n_arms=snakemake.params.n_arms,
    n_types=snakemake.params.n_types,
    horizons=snakemake.params.horizons,
    seeds=snakemake.params.seeds,
    adversary=snakemake.params.adversary,
    adversary_params=snakemake.params.adversary_params,
    out_json=snakemake.output.records,
    group=snakemake.wildcards.seeds,
)
