"""Encoders of increasing width trained on the spectral objective: CCA to the exact top-d functions."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.contextures.pipeline import run_scaling

sc = dict(snakemake.params.scaling)
run_scaling(
    dataset=sc["dataset"],
    k=sc["k"],
    d=sc["d"],
    widths=list(sc["widths"]),
    depth=sc["depth"],
    steps=sc["steps"],
    lr=sc["lr"],
    seeds=list(sc["seeds"]),
    fractions=dict(snakemake.params.split),
    max_pretrain=snakemake.params.max_pretrain,
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    data_home=snakemake.params.openml_home,
)
