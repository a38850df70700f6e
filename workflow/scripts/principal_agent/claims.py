"""The paper's claims.json: verdicts computed from the summary's metrics by each claim's criterion."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.principal_agent.claims import write_paper_claims

write_paper_claims(
    summary_json=snakemake.input.summary,
    scale=snakemake.params.scale,
    adversaries=snakemake.params.adversaries,
    lb_algorithms=snakemake.params.lb_algorithms,
    two_point_algorithms=snakemake.params.two_point_algorithms,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
