"""Synthetic process, every seed: train all variants and DeepAR, compare with the optimal conditional quantizer."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.timemcl.pipeline import run_toy

for seed, metrics, heads in zip(snakemake.params.seeds, snakemake.output.metrics, snakemake.output.heads, strict=True):
    run_toy(
        process=snakemake.wildcards.process,
        seed=int(seed),
        toy_cfg=snakemake.params.toy,
        model_params=snakemake.params.model,
        train_params=snakemake.params.train,
        variants=snakemake.params.variants,
        out_json=metrics,
        out_npz=heads,
    )
