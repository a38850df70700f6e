"""Full scale: every guidance method on the configured layouts with Stable Diffusion (one seed)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.winwinlay.sd_step import sd_job

sd_job(
    sd_cfg=dict(snakemake.params.sd),
    sampling=dict(snakemake.params.sampling),
    methods={k: dict(v) for k, v in snakemake.params.methods.items()},
    seed=int(snakemake.wildcards.seed),
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    out_npz=snakemake.output.arrays,
    device=job_device(snakemake.resources),
    weights=snakemake.input.weights,
)
