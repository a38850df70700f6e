"""cfdg's claims.json (and metrics.json): measured metrics of every seed group, verdicts computed by each claim's criterion."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.cfdg.results import write_paper_claims

write_paper_claims(
    quality_json=list(snakemake.input.quality),
    o2o_json={n: list(snakemake.input[f"o2o_{n}"]) for n in snakemake.params.datasets},
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
