"""Full scale, one seed group: the fetched causal LM tuned with each compiled loss, on the job's device."""

import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.common.device import job_device
from methods.dpa_logic.lm import lm_experiment

lm = dict(snakemake.params.lm)
lm_experiment(
    model_dir=snakemake.input.model,
    pairs_jsonl=snakemake.input.pairs,
    n_train=lm["n_train"],
    n_test=lm["n_test"],
    max_prompt=lm["max_prompt"],
    max_response=lm["max_response"],
    losses=list(lm["losses"]),
    hparams={k: dict(v) for k, v in lm["hparams"].items()},
    steps=lm["steps"],
    batch_size=lm["batch_size"],
    lr=lm["lr"],
    seeds=list(snakemake.params.seeds),
    out_json=snakemake.output.metrics,
    device=job_device(snakemake.resources),
    threads=snakemake.threads,
)
