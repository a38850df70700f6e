"""One adaptation method on the frozen pre-trained backbone, for the seeds of the job's {seeds} group."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.gaprompt.adapt_step import adapt_job

adapt_job(
    method=snakemake.wildcards.method,
    data_npz=snakemake.input.clouds,
    ckpt=snakemake.input.ckpt,
    backbone=dict(snakemake.params.backbone),
    adapt=dict(snakemake.params.adapt),
    seeds=list(snakemake.params.seeds),
    paper_arch=dict(snakemake.params.paper_arch),
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    out_npz=snakemake.output.arrays,
    device=job_device(snakemake.resources),
)
