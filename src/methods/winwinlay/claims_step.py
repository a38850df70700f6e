"""Step winwinlay_claims: the measured metrics and the verdicts of claims.yaml."""

from __future__ import annotations

from pathlib import Path

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, read_json, write_json

DECLARATION = Path(__file__).with_name("claims.yaml")
TOY_METRICS = ("mass", "coverage", "entropy", "centroid_offset")


def claims_metrics(toy_json: str, guide_json: list[str]) -> dict:
    """Flat {metric: per-seed list} read by claims.yaml's criteria (guide files in seed order)."""
    toy = read_json(toy_json)
    out = {k: v for k, v in toy.items() if k.startswith(TOY_METRICS)}
    runs = [read_json(p) for p in guide_json]
    for name in runs[0]["methods"]:
        for key in runs[0][name]:
            out[f"{key}_{name}"] = [r[name][key] for r in runs]
    out["fd_real_real"] = [r["fd_real_real"] for r in runs]
    return out


def write_paper_claims(
    toy_json: str, guide_json: list[str], train_json: str, scale: str, claims_path: str, summary_path: str
) -> None:
    """Measured metrics (metrics_summary.json) and the verdicts of claims.yaml (claims.json, metrics.json)."""
    measured = claims_metrics(toy_json, guide_json)
    measured["detector_miou_real"] = read_json(train_json)["detector_miou_real"]
    write_json(summary_path, measured)
    params = read_json(toy_json)["config"]["params"]
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale, expand_over={"param": params})
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
