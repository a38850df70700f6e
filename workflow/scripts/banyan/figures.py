"""Figures: Spearman rho per variant and seed beside MiniLM; training-loss curves."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.banyan.pipeline import figures_job

figures_job(
    metrics_json={v: snakemake.input[f"metrics_{v}"] for v in snakemake.params.variants},
    arrays_npz={v: snakemake.input[f"arrays_{v}"] for v in snakemake.params.variants},
    minilm_json=snakemake.input.minilm,
    out_scores=snakemake.output.scores,
    out_curves=snakemake.output.curves,
)
