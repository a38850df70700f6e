"""hypothesaes's claims.json: measured metrics, verdicts computed by each claim's criterion."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.hypothesaes.pipeline import write_paper_claims

write_paper_claims(
    synthetic_json=snakemake.input.synthetic,
    real_json=snakemake.input.real,
    synthetic10_json=snakemake.input.synthetic10,
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
    figure_path=snakemake.output.figure,
    table_path=snakemake.output.table,
)
