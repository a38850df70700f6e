"""binary_denoising, issue 30: exact enumeration of the one-stage chain (contraction rate, bias) for one seed."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.binary_denoising.exact import exact_chain_job

exact_chain_job(
    params=dict(snakemake.params.exact),
    seed=int(snakemake.wildcards.x3_seed),
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
)
