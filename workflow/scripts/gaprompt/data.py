"""Pre-training clouds and the downstream train/test splits (procedural, or the paper's datasets)."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.gaprompt.pipeline import data_job

data_job(data=dict(snakemake.params.data), out_npz=snakemake.output.clouds, out_json=snakemake.output.info)
