"""Gather every paper's claims.json into REPORT.md and the README's papers table."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.report import write_reports

write_reports(
    claims_files=list(snakemake.input.claims),
    report_path=snakemake.output.report,
    table_path=snakemake.output.table,
    benchmarks_dir=snakemake.params.benchmarks,
)
