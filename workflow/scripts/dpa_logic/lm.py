"""Full scale: a causal LM tuned on a preference dataset with each compiled loss."""
import sys

sys.stderr = open(snakemake.log[0], "w", buffering=1)

from methods.dpa_logic.pipeline import lm_experiment

lm = dict(snakemake.params.lm)
lm_experiment(
    model_id=lm["model_id"],
    dataset=dict(lm["dataset"]),
    n_train=lm["n_train"],
    n_test=lm["n_test"],
    max_prompt=lm["max_prompt"],
    max_response=lm["max_response"],
    losses=list(lm["losses"]),
    hparams={k: dict(v) for k, v in lm["hparams"].items()},
    steps=lm["steps"],
    batch_size=lm["batch_size"],
    lr=lm["lr"],
    seeds=list(lm["seeds"]),
    device=lm["device"],
    out_json=snakemake.output.metrics,
)
