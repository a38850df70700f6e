"""The cross-attention denoiser on digit canvases, the layout detector and the realism-proxy features."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.winwinlay.train_step import train_job

train_job(
    data=dict(snakemake.params.data),
    model_cfg=dict(snakemake.params.model),
    detector_cfg=dict(snakemake.params.detector),
    seed=snakemake.params.seed,
    threads=snakemake.threads,
    out_ckpt=snakemake.output.ckpt,
    out_json=snakemake.output.metrics,
    device=job_device(snakemake.resources),
)
