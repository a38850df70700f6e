"""Point-MAE pre-training of the backbone (or loading the released checkpoint at full scale)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.gaprompt.pretrain_step import pretrain_job

pretrain_job(
    data_npz=snakemake.input.clouds,
    backbone=dict(snakemake.params.backbone),
    pretrain=dict(snakemake.params.pretrain),
    threads=snakemake.threads,
    out_ckpt=snakemake.output.ckpt,
    out_json=snakemake.output.metrics,
    device=job_device(snakemake.resources),
)
