"""Error vs rate per distribution and NestQuant's gain over uniform quantization, with the E8 line (and the
curves as CSV)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.nestquant.figures import synthetic_figure

synthetic_figure(
    list(snakemake.input.synthetic), snakemake.params.claim_q, snakemake.output.figure, out_csv=snakemake.output.data
)
