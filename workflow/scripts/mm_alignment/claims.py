"""mm_alignment's claims.json: measured metrics (seed groups merged), verdicts computed by each claim's criterion."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.mm_alignment.results import write_paper_claims

write_paper_claims(
    synthetic_json={u: list(snakemake.input[f"synthetic_U{u}"]) for u in snakemake.params.uniqueness},
    real_json=list(snakemake.input.real),
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
