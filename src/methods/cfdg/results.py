"""The claims step of cfdg: the flat metrics claims.yaml reads, from every seed group's quality and o2o files (merged
in seed order), and the verdicts (claims.json, metrics.json)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, read_json, write_json

from .metrics import paired_t_interval

DECLARATION = Path(__file__).with_name("claims.yaml")


def merge_quality(paths: list[str]) -> dict:
    """The quality step's seed groups as one document: per-seed metric lists concatenated in seed order."""
    docs = [read_json(p) for p in paths]
    out = {**docs[0], "seeds": [s for d in docs for s in d["seeds"]]}
    out["metrics"] = {k: [x for d in docs for x in d["metrics"][k]] for k in docs[0]["metrics"]}
    return out


def merge_o2o(paths: list[str]) -> dict:
    """The o2o step's seed groups of one offline dataset as one document: per-seed scores in seed order."""
    docs = [read_json(p) for p in paths]
    return {
        "seeds": [s for d in docs for s in d["seeds"]],
        "final_score": {v: [x for d in docs for x in d["final_score"][v]] for v in docs[0]["final_score"]},
        "offline_score": [x for d in docs for x in d["offline_score"]],
    }


def claims_metrics(quality_json: list[str], o2o_json: dict[str, list[str]]) -> dict:
    """Flat {metric: value or per-seed list} read by claims.yaml; inputs are lists of seed-group files."""
    q = merge_quality(quality_json)
    w = q["guidance_w"]
    m = q["metrics"]
    # null = not measured (the dynamics errors on a Bullet task): NaN, which the claims read as inconclusive
    out = {k: [np.nan if x is None else x for x in v] for k, v in m.items()}
    cf = f"cfg_w{w:g}"
    for kind in ("mmd", "auc", "dyn_next", "dyn_rew", "mmd_train"):
        out[f"{kind}_cfdg"] = out[f"{kind}_{cf}"]
        out[f"{kind}_synther"] = out[f"{kind}_union"]
    for name, paths in sorted(o2o_json.items()):
        o = merge_o2o(paths)
        f = {v: np.asarray(scores) for v, scores in o["final_score"].items()}  # iql, synther, cfdg
        for v in f:
            out[f"score_{v}_{name}"] = f[v].tolist()
        out[f"score_offline_{name}"] = o["offline_score"]
        # paired intervals of CFDG against each baseline, and the nulls of the return claims: SynthER-style
        # augmentation in CFDG's place (against IQL) and plain IQL in CFDG's place (against SynthER)
        for a, b in (("cfdg", "iql"), ("cfdg", "synther"), ("synther", "iql"), ("iql", "synther")):
            mean, lo, hi = paired_t_interval(f[a], f[b])
            out[f"diff_{a}_{b}_{name}"] = mean
            out[f"ci_low_{a}_{b}_{name}"] = lo
            out[f"ci_high_{a}_{b}_{name}"] = hi
        out[f"rel_gain_cfdg_iql_{name}"] = float((f["cfdg"].mean() - f["iql"].mean()) / abs(f["iql"].mean()))
    return out


def write_paper_claims(
    quality_json: list[str], o2o_json: dict[str, list[str]], scale: str, claims_path: str, summary_path: str
) -> None:
    """Step cfdg_claims: measured metrics and the verdicts of claims.yaml."""
    measured = claims_metrics(quality_json, o2o_json)
    write_json(summary_path, measured)
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale, expand_over={"dataset": sorted(o2o_json)})
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
