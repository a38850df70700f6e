"""One synthetic design: an independent draw of the planted-concept dataset per seed, each embedded."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.hypothesaes.data import prepare_synthetic_draws

prepare_synthetic_draws(
    spec=dict(snakemake.params.spec),
    split=dict(snakemake.params.split),
    seeds=list(snakemake.params.seeds),
    minilm_dir=snakemake.params.minilm_dir,
    embed_cfg=dict(snakemake.params.embed),
    out_npz=list(snakemake.output.npz),
    out_json=list(snakemake.output.meta),
    threads=snakemake.threads,
)
