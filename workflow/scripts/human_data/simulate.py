"""Every platform design and the sensitivity sweep for the seeds of one seed group (the project's illustrative
model)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.human_data.jobs import run_simulations

run_simulations(
    designs=dict(snakemake.params.designs),
    world=dict(snakemake.params.world),
    population=dict(snakemake.params.population),
    seeds=list(snakemake.params.seeds),
    window=snakemake.params.window,
    sweep=dict(snakemake.params.sweep),
    out_json=snakemake.output.outcomes,
    out_npz=snakemake.output.curves,
)
