"""One seed of the tabular experiment for one policy parametrisation: every configured loss."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.dpa_logic.tabular import tabular_experiment

tabular_experiment(
    seed=int(snakemake.wildcards.seed),
    policy=snakemake.wildcards.policy,
    task={**dict(snakemake.params.task), "feature_dim": snakemake.params.feature_dim},
    losses=list(snakemake.params.losses),
    hparams={k: dict(v) for k, v in snakemake.params.hparams.items()},
    steps=snakemake.params.steps,
    lr=snakemake.params.lr,
    log_every=snakemake.params.log_every,
    out_json=snakemake.output.metrics,
)
