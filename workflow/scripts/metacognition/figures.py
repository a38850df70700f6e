"""Competence curves of every agent (changing and stationary environments) and the ablation bars."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.metacognition.pipeline import make_figures

make_figures(
    metrics_json=snakemake.input.metrics,
    curves_npz=snakemake.input.curves,
    switch_at=snakemake.params.switch_at,
    new_family_at=snakemake.params.new_family_at,
    curves_png=snakemake.output.curves,
    ablation_png=snakemake.output.ablation,
)
