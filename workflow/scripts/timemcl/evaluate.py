"""Evaluate every model of one dataset, K and seed on the test windows."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.timemcl.pipeline import evaluate_dataset

evaluate_dataset(
    dataset=snakemake.wildcards.dataset,
    series_csv=snakemake.input.series,
    spec=snakemake.params.spec,
    timemcl_ckpts=list(snakemake.input.timemcl),
    variants=snakemake.params.variants,
    deepar_ckpt=snakemake.input.deepar,
    K=int(snakemake.wildcards.K),
    seed=int(snakemake.wildcards.seed),
    out_json=snakemake.output.metrics,
    histories=list(snakemake.input.histories),
)
