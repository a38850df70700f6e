"""Paper scale: Banyan's corpus and STS sets fetched on the submit host into the Hugging Face cache."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.banyan.data import fetch_datasets

fetch_datasets(dict(snakemake.params.data), snakemake.params.cache_dir, snakemake.output.manifest)
