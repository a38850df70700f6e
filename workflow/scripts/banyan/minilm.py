"""all-MiniLM-L6-v2 (pretrained, not trained here) on the same pairs: an upper reference."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.banyan.minilm import minilm_job
from methods.common.device import job_device

minilm_job(
    data_path=snakemake.input.data,
    model_dir=snakemake.params.model_dir,
    max_length=snakemake.params.max_length,
    min_word_pairs=snakemake.params.min_word_pairs,
    seeds=list(snakemake.params.seeds),
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    device=job_device(snakemake.resources),
)
