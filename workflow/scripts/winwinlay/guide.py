"""One sampling seed: every guidance method on the same held-out layouts and initial noise."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.winwinlay.guide_step import guide_job

guide_job(
    ckpt_path=snakemake.input.ckpt,
    data=dict(snakemake.params.data),
    sampling=dict(snakemake.params.sampling),
    methods={k: dict(v) for k, v in snakemake.params.methods.items()},
    seed=int(snakemake.wildcards.seed),
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    out_npz=snakemake.output.arrays,
    device=job_device(snakemake.resources),
)
