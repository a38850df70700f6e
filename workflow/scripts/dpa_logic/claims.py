"""dpa_logic's claims.json (and metrics.json): measured metrics, verdicts computed by each claim's criterion."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.dpa_logic.results import write_paper_claims

write_paper_claims(
    semantics_json=snakemake.input.semantics,
    tabular_files={p: list(f) for p, f in snakemake.params.tabular.items()},
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
