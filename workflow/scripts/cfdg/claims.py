"""cfdg's claims.json: measured metrics, verdicts computed by each claim's criterion."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.cfdg.pipeline import write_paper_claims

write_paper_claims(
    quality_json=snakemake.input.quality,
    o2o_json={n: snakemake.input[f"o2o_{n}"] for n in snakemake.params.datasets},
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
