"""metacognition's claims.json: the illustrative learner's measured outcomes, verdicts by each criterion."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.metacognition.pipeline import write_paper_claims

write_paper_claims(
    metrics_json=snakemake.input.metrics,
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
