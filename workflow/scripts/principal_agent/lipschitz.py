"""Smooth responses: Tsallis-INF on the eps-grid, logit agents or the needle family."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.principal_agent.jobs import run_lipschitz

run_lipschitz(
    instance=snakemake.wildcards.pa_instance,
    horizons=snakemake.params.horizons,
    seeds=snakemake.params.seeds,
    n_arms=snakemake.params.n_arms,
    logit=snakemake.params.logit,
    needle=snakemake.params.needle,
    adversary_params=snakemake.params.adversary_params,
    out_json=snakemake.output.records,
    group=snakemake.wildcards.seeds,
)
