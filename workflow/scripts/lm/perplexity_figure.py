"""Perplexity of the LM next to the unigram and bigram baselines (rule lm_perplexity_figure)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.lm.figures import draw_perplexity

draw_perplexity(snakemake.input.metrics, snakemake.output.figure)
