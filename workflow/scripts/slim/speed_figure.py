"""Figure: per-layer speedups over dense fp32 and decode tokens/s per format."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.slim.figures import speed_figure

speed_figure(speed_json=snakemake.input.speed, out_png=snakemake.output.figure)
