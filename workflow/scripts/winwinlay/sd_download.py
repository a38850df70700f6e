"""Full scale, on the submit host: the Stable Diffusion weights the GPU jobs load (compute nodes may be offline)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.winwinlay.weights import download_weights

download_weights(
    model_id=snakemake.params.model_id,
    revision=snakemake.params.revision,
    variant=snakemake.params.variant,
    folder=snakemake.output.weights,
)
