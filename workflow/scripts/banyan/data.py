"""Banyan's training corpus and evaluation pairs (synthetic grammar at tiny, `datasets` at full)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.banyan.data import data_job

data_job(
    cfg=dict(snakemake.params.data),
    word_files={k: snakemake.input[k] for k in snakemake.params.word_sets},
    seeds=list(snakemake.params.seeds),
    out_path=snakemake.output.data,
    out_stats=snakemake.output.stats,
    cache_dir=snakemake.params.cache_dir,
)
