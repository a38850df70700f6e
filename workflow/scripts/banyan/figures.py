"""Figures: Spearman rho per variant and seed beside MiniLM (and its data as CSV); training-loss curves."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.banyan.figures import figures_job

figures_job(
    metrics_json={v: list(snakemake.input[f"json_{v}"]) for v in snakemake.params.variants},
    arrays_npz={v: list(snakemake.input[f"npz_{v}"]) for v in snakemake.params.variants},
    minilm_json=snakemake.input.minilm,
    out_scores=snakemake.output.scores,
    out_curves=snakemake.output.curves,
    out_scores_csv=snakemake.output.scores_data,
)
