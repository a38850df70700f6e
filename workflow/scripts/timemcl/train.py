"""Train one model for every seed of a seed group: a TimeMCL variant ({variant} wildcard) or the DeepAR-style baseline."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.timemcl.train import train_model

wc = snakemake.wildcards
train_model(
    series_csv=snakemake.input.series,
    spec=snakemake.params.spec,
    method=wc.get("variant", "deepar"),
    K=int(wc.get("K", 1)),
    seeds=list(snakemake.params.seeds),
    model_params=snakemake.params.model,
    train_params=snakemake.params.train,
    ckpt_path=snakemake.output.ckpt,
    history_path=snakemake.output.history,
    threads=snakemake.threads,
    device=job_device(snakemake.resources),
)
