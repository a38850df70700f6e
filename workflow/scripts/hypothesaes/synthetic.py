"""One synthetic design, one seed group: an independent draw of the planted-concept dataset per seed, each
embedded on the job's device."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.hypothesaes.data import prepare_synthetic_draws

prepare_synthetic_draws(
    spec=dict(snakemake.params.spec),
    split=dict(snakemake.params.split),
    seeds=list(snakemake.params.seeds),
    minilm_dir=snakemake.params.minilm_dir,
    embed_cfg=dict(snakemake.params.embed),
    out_dir=snakemake.output.draws,
    threads=snakemake.threads,
    device=job_device(snakemake.resources),
)
