"""Distortion vs K on the sweep dataset: figure, table and its data as CSV."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.timemcl.figures import sweep_table

sweep_table(
    metrics_files=list(snakemake.input.metrics),
    variant=snakemake.params.variant,
    out_png=snakemake.output.figure,
    out_json=snakemake.output.table,
    out_csv=snakemake.output.data,
)
