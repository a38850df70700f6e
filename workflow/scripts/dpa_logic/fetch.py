"""Full scale, on the submit host: the causal LM's files and the preference pairs (compute nodes may have no
internet)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.dpa_logic.lm import fetch_lm

lm = dict(snakemake.params.lm)
fetch_lm(
    model_id=lm["model_id"],
    dataset=dict(lm["dataset"]),
    n_pairs=lm["n_train"] + lm["n_test"],
    out_model=snakemake.output.model,
    out_pairs=snakemake.output.pairs,
)
