"""One dataset, one seed group: every method's features -> Lasso selection -> interpretation -> held-out
validation (at paper scale the LLM's calls, cached on disk per job)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.hypothesaes.data import step_data_files
from methods.hypothesaes.experiment import run_experiment

seeds = list(snakemake.params.seeds)
run_experiment(
    data_files=step_data_files(
        seeds, snakemake.input.get("draws"), snakemake.input.get("npz"), snakemake.input.get("meta")
    ),
    features_npz=snakemake.input.features,
    features_json=snakemake.input.features_meta,
    methods=list(snakemake.params.methods),
    selection=dict(snakemake.params.selection),
    interpret=dict(snakemake.params.interpret),
    interpreter=dict(snakemake.params.interpreter),
    alpha=snakemake.params.alpha,
    seeds=seeds,
    out_json=snakemake.output.results,
    llm_cache=snakemake.params.llm_cache,
)
