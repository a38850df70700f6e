"""Paper scale: the real-data split (Hugging Face) fetched on the submit host into the cache the real job reads."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.mm_alignment.experiments import fetch_hf

fetch_hf(dict(snakemake.params.source), snakemake.params.cache_dir, snakemake.output.manifest)
