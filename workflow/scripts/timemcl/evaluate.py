"""Evaluate every model of one dataset, K and seed group on the test windows."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.timemcl.evaluate import evaluate_models

evaluate_models(
    dataset=snakemake.wildcards.dataset,
    series_csv=snakemake.input.series,
    spec=snakemake.params.spec,
    timemcl_ckpts=dict(zip(snakemake.params.variants, snakemake.input.timemcl, strict=True)),
    deepar_ckpt=snakemake.input.deepar,
    K=int(snakemake.wildcards.K),
    seeds=list(snakemake.params.seeds),
    out_json=snakemake.output.metrics,
    histories=list(snakemake.input.histories),
    threads=snakemake.threads,
    device=job_device(snakemake.resources),
    primary=snakemake.params.primary,
    single_ckpt=snakemake.input.get("single") or None,
    single_history=snakemake.input.get("single_history") or None,
)
