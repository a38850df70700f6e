"""One group of scaling seeds: encoders of increasing width trained on the spectral objective (on the job's
device): CCA to the exact top-d functions."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.data import verify_pins

verify_pins(snakemake.params.pins)  # pinned downloads: checked before they are read

from methods.common.device import job_device
from methods.contextures.scaling import run_scaling

sc = dict(snakemake.params.scaling)
run_scaling(
    dataset=sc["dataset"],
    k=sc["k"],
    d=sc["d"],
    widths=list(sc["widths"]),
    depth=sc["depth"],
    steps=sc["steps"],
    lr=sc["lr"],
    seeds=list(snakemake.params.seeds),
    fractions=dict(snakemake.params.split),
    max_pretrain=snakemake.params.max_pretrain,
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    openml_npz=snakemake.input.get("openml"),
    wheel=snakemake.input.get("wheel"),
    device=job_device(snakemake.resources),
)
