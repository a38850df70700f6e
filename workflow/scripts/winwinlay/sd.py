"""Full scale: every guidance method on the configured layouts with Stable Diffusion (one seed)."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.winwinlay.pipeline import sd_job

sd_job(
    sd_cfg=dict(snakemake.params.sd),
    sampling=dict(snakemake.params.sampling),
    methods={k: dict(v) for k, v in snakemake.params.methods.items()},
    seed=int(snakemake.wildcards.seed),
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    out_npz=snakemake.output.arrays,
)
