"""Offline-to-online IQL on one offline dataset: plain, + SynthER-style augmentation, + CFDG."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.cfdg.pipeline import o2o_job

o2o_job(
    offline_npz=snakemake.input.offline,
    reference_json=snakemake.input.reference,
    env_id=snakemake.params.env,
    seeds=list(snakemake.params.seeds),
    iql=dict(snakemake.params.iql),
    diffusion=dict(snakemake.params.diffusion),
    o2o=dict(snakemake.params.o2o),
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    out_npz=snakemake.output.curves,
)
