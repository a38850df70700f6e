"""Perplexity of the LM next to unigram and bigram baselines (rule lm_evaluate)."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.lm.pipeline import evaluate

evaluate(snakemake.params.model_dir, snakemake.input.tokens, snakemake.params.eval, snakemake.output.metrics,
         snakemake.output.figure, threads=snakemake.threads)
