"""Quality ladder on the shared small Llama for one calibration seed (perplexity, layer output errors)."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.slim.pipeline import lm_ladder

lm_ladder(
    model_dir=snakemake.params.model_dir,
    tokens=snakemake.input.tokens,
    recipes=snakemake.params.recipes,
    names=snakemake.params.names,
    seed=int(snakemake.wildcards.seed),
    calibration=snakemake.params.calibration,
    evaluation=snakemake.params.evaluation,
    peft=snakemake.params.peft,
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
)
