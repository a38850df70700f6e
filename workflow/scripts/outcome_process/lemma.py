"""Change of Trajectory Measure: exact ratios kappa against C_sa and C_traj."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.outcome_process.jobs import lemma_experiment

lemma_experiment(
    families=list(snakemake.params.families),
    specs={k: dict(v) for k, v in snakemake.params.specs.items()},
    eps=snakemake.params.eps,
    sweep_points={k: [dict(p) for p in v] for k, v in snakemake.params.sweep_points.items()},
    chain=dict(snakemake.params.chain),
    n_policies=snakemake.params.n_policies,
    seed=snakemake.params.seed,
    out_json=snakemake.output.metrics,
)
