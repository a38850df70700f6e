"""banyan's claims.json: measured metrics, verdicts computed by each claim's criterion."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.banyan.pipeline import write_paper_claims

write_paper_claims(
    metrics_json={v: snakemake.input[f"metrics_{v}"] for v in snakemake.params.variants},
    minilm_json=snakemake.input.minilm,
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
