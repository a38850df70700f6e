"""Byte-level BPE trained on the train split (rule lm_tokenizer)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from pathlib import Path

from methods.common.lm.prepare import build_tokenizer

build_tokenizer(snakemake.input.train, snakemake.params.vocab_size, Path(snakemake.output.tokenizer).parent)
