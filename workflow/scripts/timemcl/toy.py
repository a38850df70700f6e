"""Synthetic process: train all variants and DeepAR, compare with the optimal conditional quantizer."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.timemcl.pipeline import run_toy

run_toy(
    process=snakemake.wildcards.process,
    seed=int(snakemake.wildcards.seed),
    toy_cfg=snakemake.params.toy,
    model_params=snakemake.params.model,
    train_params=snakemake.params.train,
    variants=snakemake.params.variants,
    out_json=snakemake.output.metrics,
    out_npz=snakemake.output.heads,
)
