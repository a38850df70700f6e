"""Perplexity of the LM, on the job's device, next to unigram and bigram baselines (rule lm_evaluate)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.common.lm.baselines import evaluate_model

evaluate_model(
    snakemake.params.model_dir,
    snakemake.input.tokens,
    snakemake.params.eval,
    snakemake.output.metrics,
    device=job_device(snakemake.resources),
    threads=snakemake.threads,
)
