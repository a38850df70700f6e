"""The shared causal LM at W4A4KV4 and W4: perplexity of fp and every method, one seed, on the job's device."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.nestquant.evaluate import lm_eval

(seed,) = snakemake.params.seeds  # one job per seed at every scale
lm_eval(
    model_dir=snakemake.params.model_dir,
    tokens=snakemake.input.tokens,
    quant=snakemake.params.quant,
    settings=snakemake.params.settings,
    calibration=snakemake.params.calibration,
    evaluation=snakemake.params.evaluation,
    seed=seed,
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    device=job_device(snakemake.resources),
)
