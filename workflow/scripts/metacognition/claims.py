"""metacognition's claims.json: the illustrative learner's measured outcomes, verdicts by each criterion."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.metacognition.claims import write_paper_claims

write_paper_claims(
    test_files=list(snakemake.input.outcomes),
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
