"""human_data's claims.json: the model's measured outcomes, verdicts computed by each claim's criterion."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.human_data.claims import write_paper_claims

write_paper_claims(
    simulation_files=list(snakemake.input.outcomes),
    reference=dict(snakemake.params.reference),
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
