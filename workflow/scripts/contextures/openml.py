"""Paper scale, on the submit host: one OpenML set through scikit-learn's fetch_openml, to a local file."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.contextures.data import fetch_openml_set

fetch_openml_set(
    name=snakemake.wildcards.contextures_dataset,
    data_home=snakemake.params.openml_home,
    out_npz=snakemake.output.npz,
)
