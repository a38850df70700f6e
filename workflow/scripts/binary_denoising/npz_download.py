"""A pinned npz archive (full MNIST at paper scale), downloaded on the submit host and kept only if its sha256
matches."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.binary_denoising.data import fetch_url_file

fetch_url_file(snakemake.params.url, snakemake.params.sha256, snakemake.output.archive)
