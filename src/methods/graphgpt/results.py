"""GraphGPT's measured numbers and claims.json (no torch: the claims job starts fast).

Metric files are the fine-tuning jobs' outputs, one per task and seed group: {"task", "seeds", "models":
{model: metrics}}, every metric a list over the group's seeds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, read_json, write_json

DECLARATION = Path(__file__).with_name("claims.yaml")


# per-seed lists of a fine-tuning record; the other fields are the same in every seed group
PER_SEED = (
    "seeds",
    "val",
    "test",
    "test_ood",
    "best_step",
    "seconds",
    "history",
    "mean_test",
    "constant_test",
    "untrained_test",
    "untrained_test_ood",
)


def merge_seed_groups(docs: list[dict]) -> list[dict]:
    """The per-task metric documents of every seed group ({"task", "seeds", "models"}; one group of all
    seeds at tiny scale, one per seed at paper scale) merged into one per task, the seeds in order."""
    by_task: dict[str, list[dict]] = {}
    for doc in docs:
        by_task.setdefault(doc["task"], []).append(doc)
    merged = []
    for task, group in by_task.items():
        group = sorted(group, key=lambda d: min(d["seeds"]))
        models = {}
        for name in group[0]["models"]:
            recs = [d["models"][name] for d in group]
            models[name] = {**recs[0], **{k: [v for r in recs for v in r[k]] for k in PER_SEED if k in recs[0]}}
        merged.append({"task": task, "seeds": [s for d in group for s in d["seeds"]], "models": models})
    return merged


def metric_runs(metric_files: list[str]) -> list[dict]:
    """Every (task, model) record of the metric files (seed groups merged), in task and model order."""
    return [m for doc in merge_seed_groups([read_json(f) for f in metric_files]) for m in doc["models"].values()]


def measured_metrics(metric_files: list[str], stats_files: list[str]) -> dict:
    """Flat {name: value or list over seeds}: `<task>_<model>_<test|test_ood>`, `<domain>_<ser>_roundtrip`,
    `<task>_mean_test` (regression: MAE of the training mean), `<task>_majority_test[_ood]` (classification),
    `<task>_constant_test` (binary: ROC-AUC of a constant score)
    and `<task>_untrained_test[_ood]` (the GET encoder and head at their random init, not fine-tuned)."""
    measured = {}
    for m in metric_runs(metric_files):
        for k in ("test", "test_ood"):
            if k in m:
                measured[f"{m['task']}_{m['model']}_{k}"] = m[k]
        for k in ("untrained_test", "untrained_test_ood"):  # the encoder at its random init, not fine-tuned
            if k in m:
                measured[f"{m['task']}_{k}"] = m[k]
        if "mean_test" in m:
            measured[f"{m['task']}_mean_test"] = m["mean_test"]
        if "constant_test" in m:
            measured[f"{m['task']}_constant_test"] = m["constant_test"]
        if "majority_test" in m:
            measured[f"{m['task']}_majority_test"] = m["majority_test"]
        if "majority_test_ood" in m:
            measured[f"{m['task']}_majority_test_ood"] = m["majority_test_ood"]
    for f in stats_files:
        s = read_json(f)
        measured[f"{Path(f).name.split('.')[0]}_roundtrip"] = s["roundtrip_fraction"]
    return measured


ABLATIONS = ("get_scratch", "get_ntp", "get_noreindex", "edgelist_smtp")


def claim_tasks(measured: dict, regression_tasks: list[str]) -> dict[str, list[str]]:
    """The task lists claims.yaml's templates expand over: `task` (every regression task), `task_all_ablations`
    (those that fine-tune every GraphGPT ablation: their competitiveness claim has each as a null) and
    `task_only_scratch` (the others: the from-scratch ablation only)."""
    full = [t for t in regression_tasks if all(f"{t}_{a}_test" in measured for a in ABLATIONS)]
    return {
        "task": list(regression_tasks),
        "task_all_ablations": full,
        "task_only_scratch": [t for t in regression_tasks if t not in full],
    }


def write_paper_claims(
    metric_files: list[str],
    stats_files: list[str],
    scale: str,
    regression_tasks: list[str],
    claims_path: str,
    summary_path: str,
) -> None:
    measured = measured_metrics(metric_files, stats_files)
    doc = evaluate_claims(
        load_declaration(DECLARATION), measured, scale, expand_over=claim_tasks(measured, regression_tasks)
    )
    write_claims(claims_path, doc)
    write_json(
        summary_path,
        {k: {"values": v if isinstance(v, list) else [v], "mean": float(np.mean(v))} for k, v in measured.items()},
    )
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}")
