"""Train the small LlamaForCausalLM (rule lm_train)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.lm.train import train

train(
    snakemake.input.tokens,
    snakemake.params.tokenizer_dir,
    snakemake.params.model,
    snakemake.params.train,
    snakemake.params.model_dir,
    threads=snakemake.threads,
)
