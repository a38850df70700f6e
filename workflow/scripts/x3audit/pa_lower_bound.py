"""principal_agent, issue 30: regret on the two-point lower-bound family for known greedy responses, one seed."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.principal_agent.lower_bound_known import lower_bound_job

lower_bound_job(
    params=dict(snakemake.params.lower_bound),
    seed=int(snakemake.wildcards.x3_seed),
    out_json=snakemake.output.metrics,
)
