"""Wikipedia articles from gensim's test data as plain text, split by article (rule lm_wikipedia)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.data import verify_pins
from methods.common.lm.wikipedia import build_wikipedia

verify_pins(snakemake.params.pins)  # pinned downloads: checked before they are read
build_wikipedia(
    snakemake.input.gensim,
    {k: snakemake.output[k] for k in ("calibration", "test", "manifest")},
    test=snakemake.params.wikipedia["test"],
    seed=snakemake.params.wikipedia["seed"],
)
