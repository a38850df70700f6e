"""The training loss curve of the small LlamaForCausalLM trained here (rule lm_loss_figure)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.lm.figures import draw_loss_curve

draw_loss_curve(snakemake.input.info, snakemake.output.figure)
