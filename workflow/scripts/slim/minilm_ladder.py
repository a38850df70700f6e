"""Quality ladder on all-MiniLM-L6-v2 for one calibration seed (embedding fidelity, word-similarity Spearman), on
the job's device."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.slim.ladder import minilm_ladder

(seed,) = snakemake.params.seeds  # one job per calibration seed at every scale
minilm_ladder(
    minilm_dir=snakemake.params.minilm_dir,
    corpus_dir=snakemake.params.corpus_dir,
    pairs_files=dict(snakemake.params.pairs_files),
    recipes=snakemake.params.recipes,
    names=snakemake.params.names,
    seed=seed,
    minilm=snakemake.params.minilm,
    peft=snakemake.params.peft,
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    device=job_device(snakemake.resources),
)
