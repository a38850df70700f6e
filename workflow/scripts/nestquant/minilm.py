"""all-MiniLM-L6-v2 at W4A4: embedding fidelity and word-similarity Spearman of every method, one seed."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.nestquant.pipeline import minilm_eval

minilm_eval(
    minilm_dir=snakemake.params.minilm_dir,
    corpus_dir=snakemake.params.corpus_dir,
    pairs_files=snakemake.params.pairs_files,
    quant=snakemake.params.quant,
    minilm=snakemake.params.minilm,
    seed=int(snakemake.wildcards.seed),
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
)
