"""Paper scale: the downloaded checkpoint through from_pretrained, saved as one safetensors directory (rule lm_pretrained)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.lm.prepare import fetch_pretrained

fetch_pretrained(
    snakemake.params.source,
    snakemake.params.model_dir,
    dtype=snakemake.params.dtype,
    model_id=snakemake.params.model_id,
)
