"""hypothesaes's claims.json (and metrics.json): measured metrics, verdicts computed by each claim's criterion;
the figure, its data and the table of top hypotheses."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.hypothesaes.results import write_paper_claims

write_paper_claims(
    synthetic_jsons=list(snakemake.input.synthetic),
    synthetic10_jsons=list(snakemake.input.synthetic10),
    real_jsons={name: list(snakemake.input[name]) for name in ("real", "convention", "rotten")},
    scale=snakemake.params.scale,
    claims_path=snakemake.output.claims,
    summary_path=snakemake.output.summary,
    figure_path=snakemake.output.figure,
    figure_csv=snakemake.output.figure_data,
    table_path=snakemake.output.table,
)
