"""tau vs err_d* per dataset, and CCA vs encoder width."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.contextures.pipeline import make_figures

make_figures(
    dataset_jsons=list(snakemake.input.datasets),
    scaling_json=snakemake.input.scaling,
    metric_png=snakemake.output.metric,
    scaling_png=snakemake.output.scaling,
)
