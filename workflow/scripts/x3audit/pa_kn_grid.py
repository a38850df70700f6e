"""principal_agent, issue 30: regret on the hidden-subset lower-bound family over a K x N grid, one seed."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.principal_agent.lower_bound_kn import kn_grid_job

kn_grid_job(
    params=dict(snakemake.params.grid),
    seed=int(snakemake.wildcards.x3_seed),
    out_json=snakemake.output.metrics,
)
