"""banyan's claims.json: measured metrics (seed groups merged), verdicts computed by each claim's criterion."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.banyan.results import write_paper_claims

write_paper_claims(
    metrics_json={v: list(snakemake.input[f"json_{v}"]) for v in snakemake.params.variants},
    minilm_json=snakemake.input.minilm,
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
