"""Figures: accuracy vs trainable parameters per method (and its data); clouds before/after the shift prompter."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.gaprompt.figures import figures_job

figures_job(
    method_json={m: snakemake.input[f"adapt_{m}"] for m in snakemake.params.methods},
    shift_npz=snakemake.input.shift,
    data_info=snakemake.input.info,
    acc_png=snakemake.output.accuracy,
    acc_csv=snakemake.output.accuracy_data,
    shift_png=snakemake.output.shift,
)
