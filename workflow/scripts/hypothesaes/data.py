"""The real dataset's texts, target, interpreter vocabulary, split and MiniLM embeddings (embedded once, on
the job's device)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.data import verify_pins
from methods.common.device import job_device
from methods.hypothesaes.data import prepare_dataset

verify_pins(snakemake.params.pins)
prepare_dataset(
    spec=dict(snakemake.params.spec),
    split=dict(snakemake.params.split),
    wheel=snakemake.input.get("wheel"),
    minilm_dir=snakemake.params.minilm_dir,
    embed_cfg=dict(snakemake.params.embed),
    out_npz=snakemake.output.npz,
    out_json=snakemake.output.meta,
    threads=snakemake.threads,
    device=job_device(snakemake.resources),
    table=snakemake.input.get("table"),
)
