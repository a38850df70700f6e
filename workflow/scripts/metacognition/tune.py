"""Every agent's own settings tuned on the tuning seeds (changing and stationary environments)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.metacognition.jobs import tune_agents

tune_agents(
    environment=dict(snakemake.params.environment),
    agent=dict(snakemake.params.agent),
    grid=dict(snakemake.params.grid),
    tune_seeds=list(snakemake.params.tune_seeds),
    seeds=list(snakemake.params.seeds),
    out_json=snakemake.output.tuned,
)
