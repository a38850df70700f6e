"""Figure: learned heads of the primary variant against the optimal quantizer, on one test path."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.timemcl.figures import plot_toy_for

plot_toy_for(
    npz_path=snakemake.input.heads,
    variant=snakemake.params.variant,
    out_png=snakemake.output.figure,
    title=f"{snakemake.wildcards.process}: TimeMCL heads vs optimal quantizer",
)
