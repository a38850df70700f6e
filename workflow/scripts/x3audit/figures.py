"""x3audit figures: binary_denoising's one-stage chain against alpha; principal_agent's lower-bound regret against T."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.x3audit.pipeline import bd_figure, op_figure, op_bt_figure, pa_figure, pa_kn_figure, pa_zoom_figure

bd_figure(bd_files=list(snakemake.input.bd), out_png=snakemake.output.bd)
pa_figure(pa_files=list(snakemake.input.pa), out_png=snakemake.output.pa)
op_figure(op_json=snakemake.input.op, out_png=snakemake.output.op)
pa_kn_figure(kn_files=list(snakemake.input.kn), out_png=snakemake.output.kn)
pa_zoom_figure(zoom_files=list(snakemake.input.zoom), out_png=snakemake.output.zoom)
op_bt_figure(bt_files=list(snakemake.input.bt), out_png=snakemake.output.bt)
