"""Figures: rate curves, coverage sweeps, change-of-measure ratios, process reward models, the
outcome-to-process constant against H, the Bradley-Terry reduction."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.outcome_process.figures import make_figures

make_figures(
    rate_files=list(snakemake.input.rate),
    horizon_files=list(snakemake.input.horizon),
    eps_files=list(snakemake.input.eps),
    samples_files=list(snakemake.input.samples),
    target=snakemake.params.target,
    lemma_json=snakemake.input.lemma,
    prm_json=snakemake.input.prm,
    preference_files=list(snakemake.input.preference),
    rate_png=snakemake.output.rate,
    rate_csv=snakemake.output.rate_data,
    coverage_png=snakemake.output.coverage,
    lemma_png=snakemake.output.lemma,
    prm_png=snakemake.output.prm,
    horizon_gap_png=snakemake.output.horizon_gap,
    preference_png=snakemake.output.preference,
)
