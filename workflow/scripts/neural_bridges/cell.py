"""Cell-differentiation model, one conditioning event, one seed group: neural bridge vs pCN, score matching, brute force."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.neural_bridges.experiments import cell_job

cell_job(
    event_name=snakemake.wildcards.event,
    cell=dict(snakemake.params.cell),
    event=dict(snakemake.params.event),
    seeds=list(snakemake.params.seeds),
    hidden=list(snakemake.params.hidden),
    train=dict(snakemake.params.train),
    eta=snakemake.params.eta,
    threads=snakemake.threads,
    out_json=snakemake.output.metrics,
    out_npz=snakemake.output.arrays,
    device=job_device(snakemake.resources),
)
