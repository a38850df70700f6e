"""Token ids of the corpus splits (rule lm_tokenize)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from pathlib import Path

from methods.common.lm.prepare import tokenize

tokenize(snakemake.params.tokenizer_dir, Path(snakemake.input.corpus[0]).parent, snakemake.output.tokens)
