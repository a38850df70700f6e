"""One coverage sweep on the de Bruijn chain (horizon: C_traj grows, C_sa fixed; eps: C_sa grows)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.outcome_process.jobs import sweep_experiment

sweep_experiment(
    sweep=snakemake.wildcards.sweep,
    points=[dict(p) for p in snakemake.params.points],
    chain=dict(snakemake.params.chain),
    n=snakemake.params.n,
    seeds=list(snakemake.params.seeds),
    repeats=snakemake.params.repeats,
    beta=snakemake.params.beta,
    lsq=dict(snakemake.params.lsq),
    out_json=snakemake.output.metrics,
)
