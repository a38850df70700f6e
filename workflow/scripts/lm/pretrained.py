"""Full scale: from_pretrained(model_id), saved as one safetensors directory (rule lm_pretrained)."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.lm.pipeline import fetch_pretrained

fetch_pretrained(snakemake.params.model_id, snakemake.params.model_dir, dtype=snakemake.params.dtype)
