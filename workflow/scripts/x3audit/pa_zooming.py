"""principal_agent, issue 30: the zooming learner (smooth responses, general incentives) against an adaptive adversary, one seed."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.principal_agent.zooming import zooming_job

zooming_job(
    params=dict(snakemake.params.zooming),
    seed=int(snakemake.wildcards.x3_seed),
    out_json=snakemake.output.metrics,
)
