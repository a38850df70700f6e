"""The causal LM at W4A4KV4 and W4: perplexity of fp and every method, one seed, on the job's device. The wheel
model (tiny scale: SmolLM2-135M) on the Wikipedia articles, or the shared LM on its token splits (full scale)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.nestquant.evaluate import lm_eval, lm_eval_pretrained

p = snakemake.params
(seed,) = p.seeds  # one job per seed at every scale
common = dict(
    quant=p.quant,
    settings=p.settings,
    calibration=p.calibration,
    evaluation=p.evaluation,
    seed=seed,
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    device=job_device(snakemake.resources),
)
if p.model_id is not None:
    lm_eval_pretrained(
        model_dir=p.model_dir,
        calibration_text=snakemake.input.calibration,
        test_text=snakemake.input.test,
        model_name=p.model_id,
        **common,
    )
else:
    lm_eval(model_dir=p.model_dir, tokens=snakemake.input.tokens, **common)
