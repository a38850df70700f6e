"""Step gaprompt_claims: the measured metrics and the verdicts of claims.yaml."""

from __future__ import annotations

from pathlib import Path

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, write_json

from .runs import read_method_runs

DECLARATION = Path(__file__).with_name("claims.yaml")


def claims_metrics(runs: dict[str, dict]) -> dict:
    """Flat {metric: value or per-seed list} read by claims.yaml's criteria, from the merged runs per method."""
    out = {}
    for method, m in runs.items():
        out[f"acc_{method}"] = m["test_acc"]
        out[f"fraction_{method}"] = m["fraction"]
        out[f"trainable_{method}"] = m["trainable"]
        out[f"frozen_unchanged_{method}"] = float(m["frozen_unchanged"])
        out[f"epochs_{method}"] = m["epochs"]
        out["acc_majority"] = m["majority_acc"]
        if "paper_arch" in m:
            out["fraction_gaprompt_paper_arch"] = m["paper_arch"]["fraction"]
            out["trainable_gaprompt_paper_arch"] = m["paper_arch"]["trainable"]
    return out


def write_paper_claims(method_json: dict[str, list[str]], scale: str, claims_path: str, summary_path: str) -> None:
    """Measured metrics (metrics_summary.json) and the verdicts of claims.yaml (claims.json, metrics.json)."""
    measured = claims_metrics(read_method_runs(method_json))
    write_json(summary_path, measured)
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale)
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
