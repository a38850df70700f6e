"""GraphGPT figures: pre-training loss curves, molecule MAE per model (and its data as CSV), accuracy
(bonds, triangles in/out of range)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.graphgpt.figures import mae_rows, plot_accuracy, plot_mae, plot_pretrain_loss, write_rows

metrics = list(snakemake.input.metrics)
plot_pretrain_loss(list(snakemake.input.histories), snakemake.output.loss)
plot_mae(metrics, snakemake.output.mae)
write_rows(mae_rows(metrics), snakemake.output.mae_data)
plot_accuracy(metrics, snakemake.output.accuracy)
