"""winwinlay's claims.json: measured metrics, verdicts computed by each claim's criterion."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.winwinlay.claims_step import write_paper_claims

write_paper_claims(
    toy_json=snakemake.input.toy,
    guide_json=list(snakemake.input.guide),
    train_json=snakemake.input.train,
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
