"""Fan plot of TimeMCL's hypotheses on one test window of a real series."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.timemcl.figures import plot_fan_for

plot_fan_for(
    series_csv=snakemake.input.series,
    spec=snakemake.params.spec,
    ckpt=snakemake.input.ckpt,
    out_png=snakemake.output.figure,
    title=f"TimeMCL on {snakemake.wildcards.dataset}",
)
