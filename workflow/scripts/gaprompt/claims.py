"""gaprompt's claims.json: measured metrics, verdicts computed by each claim's criterion."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.gaprompt.claims_step import write_paper_claims

write_paper_claims(
    method_json={m: snakemake.input[f"adapt_{m}"] for m in snakemake.params.methods},
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
