"""Offline datasets (D4RL-style stand-ins or D4RL via minari), online train/held-out sets, reference returns."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.cfdg.data import data_job
from methods.common.data import verify_pins

verify_pins(snakemake.params.pins)  # the pinned pybullet wheel (Bullet tasks): checked before it is read
data_job(
    env_id=snakemake.params.env,
    datasets={k: dict(v) for k, v in snakemake.params.datasets.items()},
    online=dict(snakemake.params.online),
    reference=dict(snakemake.params.reference),
    behaviour=dict(snakemake.params.behaviour) if snakemake.params.behaviour else None,
    expert_wheel=snakemake.input.expert[0] if snakemake.input.expert else None,
    expert_member=snakemake.params.expert_member,
    seed=snakemake.params.seed,
    out_dir=snakemake.params.out_dir,
    out_reference=snakemake.output.reference,
)
