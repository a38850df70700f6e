"""One dataset and seed of binarised digits: learned denoiser, multi-measurement samples, quality vs m."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.binary_denoising.experiments import run_digits
from methods.common.data import verify_pins
from methods.common.device import job_device

verify_pins(snakemake.params.pins)  # pinned downloads: checked before they are read
run_digits(
    dataset=snakemake.wildcards.bd_dataset,
    seed=int(snakemake.wildcards.bd_seed),
    spec=snakemake.params.spec,
    data_file=snakemake.input.data[0],
    model=snakemake.params.model,
    train=snakemake.params.train,
    classifier=snakemake.params.classifier,
    sampling=snakemake.params.sampling,
    out_json=snakemake.output.metrics,
    out_npz=snakemake.output.samples,
    device=job_device(snakemake.resources),
    threads=snakemake.threads,
)
