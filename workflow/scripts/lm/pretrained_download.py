"""Paper scale: the checkpoint's files from the Hugging Face Hub, on the submit host (rule lm_pretrained_download)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.lm.prepare import download_pretrained

download_pretrained(snakemake.params.model_id, snakemake.output.folder)
