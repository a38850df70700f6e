"""The shared small Llama at W4A4KV4 and W4: perplexity of fp and every method, one seed."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.nestquant.pipeline import lm_eval

lm_eval(
    model_dir=snakemake.params.model_dir,
    tokens=snakemake.input.tokens,
    quant=snakemake.params.quant,
    settings=snakemake.params.settings,
    calibration=snakemake.params.calibration,
    evaluation=snakemake.params.evaluation,
    seed=int(snakemake.wildcards.seed),
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
)
