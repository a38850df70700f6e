"""GraphGPT's measured numbers and claims.json (no torch: the claims job starts fast).

Metric files are the fine-tuning jobs' outputs, one per task: {"task", "models": {model: metrics}}.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, read_json, write_json

DECLARATION = Path(__file__).with_name("claims.yaml")


def metric_runs(metric_files: list[str]) -> list[dict]:
    """Every (task, model) record of the per-task metric files, in file and model order."""
    return [m for f in metric_files for m in read_json(f)["models"].values()]


def measured_metrics(metric_files: list[str], stats_files: list[str]) -> dict:
    """Flat {name: value or list over seeds}: `<task>_<model>_<test|test_ood>`, `<domain>_<ser>_roundtrip`,
    `<task>_mean_test` (regression: MAE of the training mean) and `<task>_majority_test[_ood]` (classification)."""
    measured = {}
    for m in metric_runs(metric_files):
        for k in ("test", "test_ood"):
            if k in m:
                measured[f"{m['task']}_{m['model']}_{k}"] = m[k]
        if "mean_test" in m:
            measured[f"{m['task']}_mean_test"] = m["mean_test"]
        if "majority_test" in m:
            measured[f"{m['task']}_majority_test"] = m["majority_test"]
        if "majority_test_ood" in m:
            measured[f"{m['task']}_majority_test_ood"] = m["majority_test_ood"]
    for f in stats_files:
        s = read_json(f)
        measured[f"{Path(f).name.split('.')[0]}_roundtrip"] = s["roundtrip_fraction"]
    return measured


def write_paper_claims(metric_files: list[str], stats_files: list[str], scale: str, regression_tasks: list[str],
                       claims_path: str, summary_path: str) -> None:
    measured = measured_metrics(metric_files, stats_files)
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale, expand_over={"task": regression_tasks})
    write_claims(claims_path, doc)
    write_json(summary_path, {k: {"values": v if isinstance(v, list) else [v],
                                  "mean": float(np.mean(v))} for k, v in measured.items()})
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}")
