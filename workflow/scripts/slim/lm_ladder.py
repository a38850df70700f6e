"""Quality ladder on the causal LM for one calibration seed (perplexity, layer output errors), on the job's device.
The wheel model (tiny scale: SmolLM2-135M) on the Wikipedia articles, or the shared LM on its token splits (full
scale)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.slim.ladder import lm_ladder

p = snakemake.params
(seed,) = p.seeds  # one job per calibration seed at every scale
text = (
    {"wikipedia": {"calibration": snakemake.input.calibration, "test": snakemake.input.test}, "model_name": p.model_id}
    if p.model_id is not None
    else {"tokens": snakemake.input.tokens}
)
lm_ladder(
    model_dir=p.model_dir,
    recipes=p.recipes,
    names=p.names,
    seed=seed,
    calibration=p.calibration,
    evaluation=p.evaluation,
    peft=p.peft,
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    device=job_device(snakemake.resources),
    **text,
)
