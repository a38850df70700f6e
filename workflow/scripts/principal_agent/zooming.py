"""Regret on the zooming learner (smooth responses, general incentives) against an adaptive adversary, every
seed of one seed group."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.principal_agent.zooming import zooming_job

zooming_job(
    params=dict(snakemake.params.experiment),
    seeds=list(snakemake.params.seeds),
    out_json=snakemake.output.metrics,
)
