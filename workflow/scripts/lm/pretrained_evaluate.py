"""Wikipedia test perplexity of the pretrained LM (rule lm_pretrained_evaluate)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.common.lm.wikipedia import evaluate_pretrained

evaluate_pretrained(
    snakemake.params.model_dir,
    snakemake.input.calibration,
    snakemake.input.test,
    snakemake.output.metrics,
    seq_len=snakemake.params.eval["seq_len"],
    batch_size=snakemake.params.eval["batch_size"],
    max_windows=snakemake.params.eval["max_windows"],
    threads=snakemake.threads,
    device=job_device(snakemake.resources),
)
