"""tau vs err_d* per dataset (and its data), and CCA vs encoder width."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.contextures.figures import make_figures

make_figures(
    dataset_jsons=list(snakemake.input.datasets),
    scaling_jsons=list(snakemake.input.scaling),
    metric_png=snakemake.output.metric,
    scaling_png=snakemake.output.scaling,
    metric_csv=snakemake.output.metric_data,
)
