"""contextures' claims.json (and metrics.json): measured metrics, verdicts computed by each claim's criterion."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.contextures.results import write_paper_claims

write_paper_claims(
    dataset_jsons=list(snakemake.input.datasets),
    scaling_jsons=list(snakemake.input.scaling),
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
