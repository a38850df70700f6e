"""Every agent tuned on the tuning seeds, then tested (changing and stationary environments)."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.metacognition.pipeline import run_experiment

run_experiment(
    environment=dict(snakemake.params.environment),
    agent=dict(snakemake.params.agent),
    grid=dict(snakemake.params.grid),
    tune_seeds=list(snakemake.params.tune_seeds),
    seeds=list(snakemake.params.seeds),
    out_json=snakemake.output.metrics,
    out_npz=snakemake.output.curves,
)
