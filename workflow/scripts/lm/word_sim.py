"""WordSim-353, SimLex-999 and the Lee documents from gensim's test data (rule lm_word_sim)."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.data import verify_pins
from methods.common.lm.prepare import unpack_word_sim

verify_pins(snakemake.params.pins)  # pinned downloads: checked before they are read
unpack_word_sim(snakemake.input.wheel, dict(snakemake.output.items()))
