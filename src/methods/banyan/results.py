"""Step banyan_claims: the measured metrics (seed groups merged in seed order) and the verdicts of
claims.yaml (no torch: the claims job starts fast)."""

from __future__ import annotations

import math
from pathlib import Path

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, read_json, write_json

DECLARATION = Path(__file__).with_name("claims.yaml")
VARIANTS = ["banyan", "no_entangle", "dense", "mean"]  # methods.banyan.model.VARIANTS
ABLATIONS = [v for v in VARIANTS if v != "banyan"]


def merge_seed_groups(docs: list[dict]) -> dict:
    """One variant's metric documents of every seed group (one group of all seeds at tiny scale, one per
    seed at paper scale) as one, seeds in order: per-seed lists concatenated, the rest from the first."""
    docs = sorted(docs, key=lambda d: min(d["seeds"]))
    merged = dict(docs[0])
    for key, value in docs[0].items():
        if isinstance(value, list) and len(value) == len(docs[0]["seeds"]):
            merged[key] = [v for d in docs for v in d[key]]
    return merged


def read_variant(paths: list[str]) -> dict:
    """The merged metrics of one variant from its seed groups' files."""
    return merge_seed_groups([read_json(p) for p in paths])


def _nan_for_null(value):
    if isinstance(value, list):
        return [math.nan if v is None else v for v in value]
    return math.nan if value is None else value


def claims_metrics(metrics_json: dict[str, list[str]], minilm_json: str) -> dict:
    """Flat {metric_variant: value or per-seed list} read by claims.yaml's criteria (`metrics_json`: the
    seed groups' files of each variant)."""
    out = {}
    for variant, paths in metrics_json.items():
        m = read_variant(paths)
        for key, val in m.items():
            if key.startswith(
                ("sts_", "word_", "untrained_", "loss_final", "nodes_per_batch", "non_embedding_parameters")
            ):
                out[f"{key}_{variant}"] = val
    for key, val in read_json(minilm_json).items():
        if key.startswith("bow_"):  # the count bag of words, the trivial null (minilm.bow_scores)
            out[f"{key[len('bow_') :]}_bow"] = val
        else:
            out[f"{key}_minilm"] = val
    return {k: _nan_for_null(v) for k, v in out.items()}


def write_paper_claims(
    metrics_json: dict[str, list[str]], minilm_json: str, scale: str, claims_path: str, summary_path: str
) -> None:
    """Step banyan_claims: measured metrics and the verdicts of claims.yaml."""
    measured = claims_metrics(metrics_json, minilm_json)
    write_json(summary_path, measured)
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale, expand_over={"ablation": ABLATIONS})
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
