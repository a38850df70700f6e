"""Paper scale, on the submit host: the real dataset's table through `datasets`, to a local parquet file."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.hypothesaes.data import fetch_table

fetch_table(spec=dict(snakemake.params.spec), out_parquet=snakemake.output.table)
