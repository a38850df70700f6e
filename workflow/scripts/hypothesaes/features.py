"""One dataset, one seed group: every method's features (the SAEs trained on the job's device)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.hypothesaes.data import step_data_files
from methods.hypothesaes.features import compute_features

seeds = list(snakemake.params.seeds)
compute_features(
    data_files=step_data_files(
        seeds, snakemake.input.get("draws"), snakemake.input.get("npz"), snakemake.input.get("meta")
    ),
    methods=dict(snakemake.params.methods),
    seeds=seeds,
    out_npz=snakemake.output.npz,
    out_json=snakemake.output.meta,
    threads=snakemake.threads,
    device=job_device(snakemake.resources),
)
