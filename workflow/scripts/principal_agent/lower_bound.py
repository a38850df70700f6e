"""Unknown greedy responses: the linear-regret instance (Theorem 2.1)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.principal_agent.jobs import run_lower_bound

run_lower_bound(
    adversary=snakemake.params.adversary,
    algorithms=snakemake.params.algorithms,
    horizons=snakemake.params.horizons,
    seeds=snakemake.params.seeds,
    window=snakemake.params.window,
    threshold_range=snakemake.params.threshold_range,
    adversary_params=snakemake.params.adversary_params,
    out_json=snakemake.output.records,
    group=snakemake.wildcards.seeds,
)
