"""Horizon sweep on a grid of n: trajectories each learner needs to reach a per-step accuracy."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.outcome_process.jobs import sample_complexity_experiment

sample_complexity_experiment(
    points=[dict(p) for p in snakemake.params.points],
    chain=dict(snakemake.params.chain),
    n_grid=list(snakemake.params.n_grid),
    seeds=list(snakemake.params.seeds),
    beta=snakemake.params.beta,
    lsq=dict(snakemake.params.lsq),
    out_json=snakemake.output.metrics,
)
