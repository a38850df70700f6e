"""Synthetic process, one seed group: train all variants and DeepAR, compare with the optimal conditional quantizer."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.timemcl.experiments import toy_job

toy_job(
    process=snakemake.wildcards.process,
    seeds=list(snakemake.params.seeds),
    toy_cfg=snakemake.params.toy,
    model_params=snakemake.params.model,
    train_params=snakemake.params.train,
    variants=snakemake.params.variants,
    primary=snakemake.params.primary,
    out_json=snakemake.output.metrics,
    out_npz=snakemake.output.heads,
    threads=snakemake.threads,
    device=job_device(snakemake.resources),
)
