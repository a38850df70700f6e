"""all-MiniLM-L6-v2 at W4 (weights only): embedding fidelity and word-similarity Spearman of every method, one seed, on the
job's device."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.nestquant.evaluate import minilm_eval

(seed,) = snakemake.params.seeds  # one job per seed at every scale
minilm_eval(
    minilm_dir=snakemake.params.minilm_dir,
    corpus_dir=snakemake.params.corpus_dir,
    pairs_files=snakemake.params.pairs_files,
    quant=snakemake.params.quant,
    minilm=snakemake.params.minilm,
    seed=seed,
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    device=job_device(snakemake.resources),
)
