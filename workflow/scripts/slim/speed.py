"""Per-layer speed at LLaMA-2-7B shapes, decode tokens/s of the shared causal LM, memory ratios, on the job's device."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.slim.speed import measure_speed

s = snakemake.params.speed
measure_speed(
    model_dir=snakemake.params.model_dir,
    shapes=s["shapes"],
    batch_sizes=s["batch_sizes"],
    rank_ratio=s["rank_ratio"],
    repeats=s["repeats"],
    decode=s["decode"],
    memory=s["memory"],
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    device=job_device(snakemake.resources),
)
