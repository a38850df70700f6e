"""Small Llama perplexity and MiniLM fidelity per method (mean and seeds)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.nestquant.figures import quality_figure

quality_figure(
    list(snakemake.input.lm), list(snakemake.input.minilm), snakemake.params.settings, snakemake.output.figure
)
