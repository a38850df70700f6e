"""Offline datasets (D4RL-style stand-ins or D4RL via minari), online train/held-out sets, reference returns."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.cfdg.data import data_job

data_job(
    env_id=snakemake.params.env,
    datasets={k: dict(v) for k, v in snakemake.params.datasets.items()},
    online=dict(snakemake.params.online),
    reference=dict(snakemake.params.reference),
    behaviour=dict(snakemake.params.behaviour) if snakemake.params.behaviour else None,
    seed=snakemake.params.seed,
    out_dir=snakemake.params.out_dir,
    out_reference=snakemake.output.reference,
)
