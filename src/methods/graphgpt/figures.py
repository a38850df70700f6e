"""Figures of the GraphGPT DAG (PNG, project style), and the data of the main one as CSV (`dvc plots`)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from methods.common.io import atomic_path, read_json
from methods.common.plotting import new_figure, save_figure

from .results import metric_runs

MODEL_ORDER = ["get_smtp", "get_ntp", "get_noreindex", "get_scratch", "edgelist_smtp", "gin"]


def _by_task(metric_files, kind):
    out = {}
    for m in metric_runs(metric_files):
        if m["kind"] == kind:
            out.setdefault(m["task"], {})[m["model"]] = m
    return out


def plot_pretrain_loss(history_files: list[str], path: str) -> None:
    """Pre-training loss per step (moving average over 20 steps), one line per run
    (history files `<domain>_<model group>.history.json`, {model: history})."""
    fig, ax = new_figure()
    for f in history_files:
        domain = Path(f).name.split(".")[0].split("_")[0]
        for model, h in read_json(f).items():
            loss = np.asarray(h["loss"])
            k = min(20, len(loss))
            smooth = np.convolve(loss, np.ones(k) / k, mode="valid")
            ax.plot(np.arange(len(smooth)) + k, smooth, label=f"{domain}_{model}")
    ax.set_xlabel("pre-training step")
    ax.set_ylabel("cross-entropy (NTP: every token, SMTP: masked tokens)")
    ax.legend()
    save_figure(fig, path)


def _bars(ax, per_model: dict, key: str, x0: float, width: float, labelled: set):
    """One bar per model (mean ± std over seeds); each model enters the legend once."""
    for j, model in enumerate(m for m in MODEL_ORDER if m in per_model):
        vals = np.asarray(per_model[model][key], dtype=float)
        ax.bar(
            x0 + j * width,
            vals.mean(),
            width,
            yerr=vals.std(ddof=1) if len(vals) > 1 else 0,
            color=f"C{MODEL_ORDER.index(model)}",
            label=None if model in labelled else model,
            capsize=2,
        )
        labelled.add(model)


def mae_rows(metric_files: list[str]) -> list[dict]:
    """The data of the MAE figure, one row per (regression task, model): mean and sd of the test MAE over
    seeds (`label` = task/model, the category axis of claims.yaml's main_figure)."""
    rows = []
    for task, per_model in sorted(_by_task(metric_files, "regression").items()):
        for model in (m for m in MODEL_ORDER if m in per_model):
            vals = np.asarray(per_model[model]["test"], dtype=float)
            rows.append(
                {
                    "label": f"{task}/{model}",
                    "task": task,
                    "model": model,
                    "n_seeds": len(vals),
                    "test_mae_mean": float(vals.mean()),
                    "test_mae_sd": float(vals.std(ddof=1)) if len(vals) > 1 else 0.0,
                }
            )
    return rows


def write_rows(rows: list[dict], path: str) -> None:
    """Tidy rows as CSV (header from the first row), written atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def plot_mae(metric_files: list[str], path: str) -> None:
    """Test MAE (mean ± std over seeds) per regression task and model."""
    tasks = _by_task(metric_files, "regression")
    fig, ax = new_figure(width=7)
    labelled = set()
    for i, (task, per_model) in enumerate(sorted(tasks.items())):
        _bars(ax, per_model, "test", i, 0.15, labelled)
    ax.set_xticks([i + 0.3 for i in range(len(tasks))], sorted(tasks))
    ax.set_ylabel("test MAE (lower is better)")
    ax.legend(fontsize="small", ncol=3, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    save_figure(fig, path)


def plot_accuracy(metric_files: list[str], path: str) -> None:
    """Test accuracy per classification task and model (triangles also on larger, OOD graphs), and test
    ROC-AUC per binary task and model."""
    groups = []
    for task, per_model in sorted(_by_task(metric_files, "classification").items()):
        groups.append((task, per_model, "test", "majority_test"))
        if any("test_ood" in m for m in per_model.values()):
            groups.append((f"{task} (larger graphs)", per_model, "test_ood", "majority_test_ood"))
    for task, per_model in sorted(_by_task(metric_files, "binary").items()):
        groups.append((f"{task} (ROC-AUC)", per_model, "test", "constant_test"))
    fig, ax = new_figure(width=7)
    labelled = set()
    for i, (_, per_model, key, null_key) in enumerate(groups):
        _bars(ax, per_model, key, i, 0.15, labelled)
        null = next(iter(per_model.values())).get(null_key)
        if null is not None:
            ax.hlines(np.mean(null), i - 0.1, i + 0.7, colors="k", linestyles="dotted")
    ax.set_xticks([i + 0.3 for i in range(len(groups))], [g[0] for g in groups])
    ax.set_ylabel("test accuracy, or ROC-AUC where named\n(dotted: majority class / constant score)")
    ax.legend(fontsize="small", ncol=3, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    save_figure(fig, path)
