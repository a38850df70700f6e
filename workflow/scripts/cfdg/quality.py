"""Generation quality, one seed group: CFDG's guided 'online' samples vs an unconditional (SynthER-style) model."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.cfdg.quality import quality_job
from methods.common.device import job_device

quality_job(
    offline_npz=snakemake.input.offline,
    online_npz=snakemake.input.online,
    env_id=snakemake.params.env,
    seeds=list(snakemake.params.seeds),
    diffusion=dict(snakemake.params.diffusion),
    quality=dict(snakemake.params.quality),
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    out_npz=snakemake.output.samples,
    device=job_device(snakemake.resources),
)
