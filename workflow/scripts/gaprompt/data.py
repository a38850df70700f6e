"""Pre-training clouds and the downstream train/test splits (procedural, or the paper's datasets)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.data import verify_pins
from methods.gaprompt.data_step import data_job

verify_pins(snakemake.params.pins)
data_job(
    data=dict(snakemake.params.data),
    out_npz=snakemake.output.clouds,
    out_json=snakemake.output.info,
    bunny_wheel=snakemake.input.get("bunny"),
)
