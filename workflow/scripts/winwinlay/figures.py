"""Figures: toy attention maps under each energy, sample grids per method, control/realism trade-off."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.winwinlay.figures import figures_job

figures_job(
    toy_npz=snakemake.input.toy,
    guide_npz=list(snakemake.input.guide_npz),
    guide_json=list(snakemake.input.guide_json),
    methods=list(snakemake.params.methods),
    toy_png=snakemake.output.toy,
    samples_png=snakemake.output.samples,
    tradeoff_png=snakemake.output.tradeoff,
    tradeoff_csv=snakemake.output.tradeoff_data,
)
