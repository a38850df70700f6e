"""Offline-to-online IQL on one offline dataset and one seed group: plain, + SynthER-style augmentation, + CFDG."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.cfdg.o2o import o2o_job
from methods.common.device import job_device

o2o_job(
    offline_npz=snakemake.input.offline,
    reference_json=snakemake.input.reference,
    env_id=snakemake.params.env,
    seeds=list(snakemake.params.seeds),
    iql=dict(snakemake.params.iql),
    diffusion=dict(snakemake.params.diffusion),
    o2o=dict(snakemake.params.o2o),
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    out_npz=snakemake.output.curves,
    device=job_device(snakemake.resources),
)
