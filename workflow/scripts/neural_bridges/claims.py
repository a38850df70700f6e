"""neural_bridges's claims.json (and metrics.json): measured metrics of every seed group, verdicts computed by each claim's criterion."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.neural_bridges.results import write_paper_claims

write_paper_claims(
    linear_json={p: list(snakemake.input[f"linear_{p}"]) for p in snakemake.params.processes},
    cell_json={e: list(snakemake.input[f"cell_{e}"]) for e in snakemake.params.events},
    cell_npz={e: list(snakemake.input[f"cell_arrays_{e}"]) for e in snakemake.params.events},
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
)
