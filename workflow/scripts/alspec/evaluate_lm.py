"""Exact / static / ALSpec at every λ on continuations of Wikipedia test text by the pretrained LM, on the job's device."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.alspec.evaluate import evaluate_lm
from methods.common.device import job_device

p = snakemake.params
evaluate_lm(
    model_dir=p.model_dir,
    test_text=snakemake.input.test,
    sink=p.sink,
    window=p.window,
    lams=p.lams,
    granularity=p.granularity,
    n_windows=p.lm["n_windows"],
    context=p.lm["context"],
    decode=p.lm["decode"],
    batch_size=p.lm["batch_size"],
    metrics_path=snakemake.output.metrics,
    threads=snakemake.threads,
    device=job_device(snakemake.resources),
    n_draws=p.draws,
)
