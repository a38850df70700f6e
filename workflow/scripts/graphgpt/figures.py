"""GraphGPT figures: pre-training loss curves, molecule MAE per model, accuracy (bonds, triangles in/out of range)."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.graphgpt.figures import plot_accuracy, plot_mae, plot_pretrain_loss

plot_pretrain_loss(list(snakemake.input.histories), snakemake.output.loss)
plot_mae(list(snakemake.input.metrics), snakemake.output.mae)
plot_accuracy(list(snakemake.input.metrics), snakemake.output.accuracy)
