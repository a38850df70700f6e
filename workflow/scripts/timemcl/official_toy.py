"""The authors' Brownian toy: K heads vs the k-means quantizer, win rates, scores vs Voronoi masses."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.timemcl.experiments import run_official_toy

run_official_toy(
    cfg=dict(snakemake.params.cfg),
    seeds=list(snakemake.params.seeds),
    out_json=snakemake.output.metrics,
    threads=snakemake.threads,
)
