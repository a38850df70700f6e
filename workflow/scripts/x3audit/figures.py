"""x3audit figure: contraction rate and bias of binary_denoising's one-stage chain against alpha."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.x3audit.pipeline import bd_figure

bd_figure(bd_files=list(snakemake.input.bd), out_png=snakemake.output.bd)
