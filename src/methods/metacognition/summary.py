"""From metacognition_evaluate's seed groups to the numbers the claims and figures read: the groups merged in seed
order (one job per seed at paper scale gives the document of one job over all seeds) and the flat per-seed
metric dict of claims.yaml."""

from __future__ import annotations

import numpy as np

from methods.common.io import read_json

FIXED_LOOPS = ("round_robin", "weakest")
PER_SEED = ("auc", "final", "on_distractor", "calibration", "post_switch_auc")


def merge_seed_groups(files: list[str]) -> dict:
    """The test document of all seeds from those of its seed groups (files in seed order): seeds joined, every
    per-seed outcome concatenated. A single file is returned as it is."""
    docs = [read_json(f) for f in files]
    out = docs[0]
    for doc in docs[1:]:
        out["seeds"] = out["seeds"] + doc["seeds"]
        for setting in ("changing", "stationary"):
            for kind, res in doc[setting].items():
                for key in PER_SEED:
                    if key in res:
                        out[setting][kind][key] = out[setting][kind][key] + res[key]
    return out


def claims_metrics(doc: dict) -> dict:
    """Flat per-seed metrics for claims.yaml."""
    m: dict = {}
    for setting, prefix in (("changing", ""), ("stationary", "stationary_")):
        for kind, res in doc[setting].items():
            for key in ("auc", "post_switch_auc", "on_distractor", "calibration"):
                if key in res:
                    m[f"{prefix}{key}_{kind}"] = res[key]
    st = doc["stationary"]
    m["stationary_best_fixed_auc"] = list(np.maximum.reduce([np.asarray(st[k]["auc"]) for k in FIXED_LOOPS]))
    return m
