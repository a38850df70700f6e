"""One variant (Banyan or an ablation) trained from scratch and evaluated, for the seeds of one group."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.banyan.train import train_job
from methods.common.device import job_device

train_job(
    variant=snakemake.wildcards.variant,
    data_path=snakemake.input.data,
    model_cfg=dict(snakemake.params.model),
    train_cfg=dict(snakemake.params.train),
    seeds=list(snakemake.params.seeds),
    min_word_pairs=snakemake.params.min_word_pairs,
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    out_npz=snakemake.output.arrays,
    device=job_device(snakemake.resources),
)
