"""The tuned agents on the test seeds of one seed group (changing and stationary environments)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.metacognition.jobs import evaluate_agents

evaluate_agents(
    environment=dict(snakemake.params.environment),
    tuned_json=snakemake.input.tuned,
    seeds=list(snakemake.params.seeds),
    out_json=snakemake.output.outcomes,
    out_npz=snakemake.output.curves,
)
