"""Materialise one GluonTS repository dataset (paper scale; runs on the submit host, which has internet)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.timemcl.data import download_gluonts

download_gluonts(item=snakemake.wildcards.item, root=snakemake.params.root)
