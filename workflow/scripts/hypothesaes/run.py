"""Every method on every seed: features -> Lasso selection -> interpretation -> held-out validation."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.hypothesaes.pipeline import run_experiment

run_experiment(
    npz=list(snakemake.input.npz),
    meta_json=list(snakemake.input.meta),
    methods=dict(snakemake.params.methods),
    selection=dict(snakemake.params.selection),
    interpret=dict(snakemake.params.interpret),
    interpreter=dict(snakemake.params.interpreter),
    alpha=snakemake.params.alpha,
    seeds=list(snakemake.params.seeds),
    out_json=snakemake.output.results,
    threads=snakemake.threads,
)
