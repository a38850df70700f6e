"""Quality ladder on the shared causal LM for one calibration seed (perplexity, layer output errors), on the
job's device."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.slim.ladder import lm_ladder

(seed,) = snakemake.params.seeds  # one job per calibration seed at every scale
lm_ladder(
    model_dir=snakemake.params.model_dir,
    tokens=snakemake.input.tokens,
    recipes=snakemake.params.recipes,
    names=snakemake.params.names,
    seed=seed,
    calibration=snakemake.params.calibration,
    evaluation=snakemake.params.evaluation,
    peft=snakemake.params.peft,
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    device=job_device(snakemake.resources),
)
