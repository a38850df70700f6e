"""Figure: perplexity / fidelity and layer output error along the quality ladder, every seed (and its data as CSV)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.slim.figures import ladder_figure

ladder_figure(
    lm_files=list(snakemake.input.lm),
    minilm_files=list(snakemake.input.minilm),
    ladder=snakemake.params.ladder,
    out_png=snakemake.output.figure,
    out_csv=snakemake.output.data,
)
