"""Paper scale: one ogb dataset ({ogb_dataset}: pcqm4mv2 or ppa) fetched on the submit host by ogb's loader."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.graphgpt.ogb_data import download

download(snakemake.wildcards.ogb_dataset, snakemake.params.root, snakemake.output.manifest)
