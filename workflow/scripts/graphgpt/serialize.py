"""Pools of random serializations (Eulerian or edge-list) of every graph of a domain, with the round-trip check."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.graphgpt.pipeline import serialize_domain

serialize_domain(
    data_json=snakemake.input.data,
    serialization=snakemake.wildcards.serialization,
    n_node_ids=snakemake.params.n_node_ids,
    n_views=snakemake.params.n_views,
    seed=snakemake.params.seed,
    out_pool=snakemake.output.pool,
    out_stats=snakemake.output.stats,
    tasks_used=snakemake.params.tasks,
)
