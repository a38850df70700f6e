"""Competence curves of every agent (changing and stationary environments) and the ablation bars."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.metacognition.figures import make_figures

make_figures(
    test_files=list(snakemake.input.outcomes),
    curves_files=list(snakemake.input.curves),
    switch_at=snakemake.params.switch_at,
    new_family_at=snakemake.params.new_family_at,
    curves_png=snakemake.output.curves,
    curves_csv=snakemake.output.curves_data,
    ablation_png=snakemake.output.ablation,
)
