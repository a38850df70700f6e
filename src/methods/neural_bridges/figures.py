"""Figures: bridge sample paths per method, marginal mean/variance against the closed form; the DAG step
that draws them (`figures_job`) and the data of the main figure (claims.yaml's main_figure) as CSV."""

from __future__ import annotations

import numpy as np
import pandas as pd

from methods.common.io import atomic_path
from methods.common.plotting import new_figure, save_figure

from .groups import read_arrays

COLORS = {"neural": "C0", "guided": "C7", "optimal": "k", "pcn": "C2", "score": "C3", "brute": "C1"}
LABELS = {
    "neural": "neural bridge",
    "guided": "guided proposal",
    "optimal": "exact theta*",
    "pcn": "pCN",
    "score": "score matching",
    "brute": "brute force",
}


def linear_figure(data: dict[str, dict], path: str) -> None:
    """Per process: neural-bridge paths over the closed-form band; marginal mean and variance."""
    procs = sorted(data)
    fig, axes = new_figure(len(procs), 3, width=11, height=3.2 * len(procs), squeeze=False)
    for row, proc in zip(axes, procs):
        d = data[proc]
        ts, m, v = d["ts"], d["cf_mean"], d["cf_var"]
        ax = row[0]
        ax.plot(ts, d["neural_paths"][0].T, color=COLORS["neural"], lw=0.6, alpha=0.6)
        ax.fill_between(ts, m - 2 * np.sqrt(v), m + 2 * np.sqrt(v), color="k", alpha=0.12, label="closed form ±2 sd")
        ax.set_title(f"{proc}: neural bridge paths (seed 0)")
        ax.set_xlabel("t")
        ax.legend(loc="best")
        for ax, key, title in ((row[1], "mean", "marginal mean"), (row[2], "var", "marginal variance")):
            ax.plot(ts, d[f"cf_{key}"], color="k", lw=2, label="closed form")
            for name, ls in (("neural", "-"), ("guided", "--")):
                for s, curve in enumerate(d[f"{name}_{key}"]):
                    ax.plot(ts, curve, color=COLORS[name], ls=ls, lw=0.9, label=LABELS[name] if s == 0 else None)
            ax.set_title(f"{proc}: {title}")
            ax.set_xlabel("t")
            ax.legend(loc="best")
    save_figure(fig, path)


def cell_figure(data: dict[str, dict], path: str) -> None:
    """Per event: sample paths of the neural bridge, pCN and score matching; marginal means ± sd."""
    events = [e for e in ("normal", "rare", "multimodal") if e in data]
    methods = ["neural", "pcn", "score"]
    fig, axes = new_figure(len(events), 4, width=14, height=3.0 * len(events), squeeze=False)
    for row, ev in zip(axes, events):
        d = data[ev]
        ts = d["ts"]
        for ax, name in zip(row, methods):
            p = d[f"{name}_paths"]
            p = p[0] if p.ndim == 4 else p
            ax.plot(ts, p[..., 0].T, color="C0", lw=0.5, alpha=0.6)
            ax.plot(ts, p[..., 1].T, color="C3", lw=0.5, alpha=0.6)
            ax.set_title(f"{ev}: {LABELS[name]}")
            ax.set_xlabel("t")
            lo, hi = np.nanpercentile(d["pcn_paths"], [0.5, 99.5])
            ax.set_ylim(lo - 0.5, hi + 0.5)
        ax = row[3]
        refs = methods + (["brute"] if "brute_mean" in d else [])
        for name in refs:
            mean, sd = d[f"{name}_mean"], d[f"{name}_sd"]
            mean, sd = (mean[0], sd[0]) if mean.ndim == 3 else (mean, sd)
            ax.plot(ts, mean[:, 0], color=COLORS[name], label=LABELS[name])
            ax.fill_between(ts, mean[:, 0] - sd[:, 0], mean[:, 0] + sd[:, 0], color=COLORS[name], alpha=0.12)
        ax.set_title(f"{ev}: X1 mean ± sd")
        ax.set_xlabel("t")
        lo, hi = np.nanpercentile(d["pcn_paths"], [0.5, 99.5])
        ax.set_ylim(lo - 0.5, hi + 0.5)
        ax.legend(loc="best")
    save_figure(fig, path)


def linear_marginals_table(data: dict[str, dict]) -> pd.DataFrame:
    """The data of the linear figure's marginal panels, tidy: one row per (process, method, t) with the
    marginal mean and variance (closed form; neural bridge and guided proposal: mean over seeds)."""
    rows = []
    for proc in sorted(data):
        d = data[proc]
        curves = {"closed_form": (d["cf_mean"], d["cf_var"])}
        for name in ("neural", "guided"):
            curves[name] = (d[f"{name}_mean"].mean(0), d[f"{name}_var"].mean(0))
        for method, (mean, var) in curves.items():
            rows += [
                {"process": proc, "method": method, "t": float(t), "mean": float(m), "var": float(v)}
                for t, m, v in zip(d["ts"], mean, var)
            ]
    return pd.DataFrame(rows, columns=["process", "method", "t", "mean", "var"])


def figures_job(
    linear_npz: dict[str, list[str]], cell_npz: dict[str, list[str]], linear_png: str, cell_png: str, linear_csv: str
) -> None:
    """Step neural_bridges_figures: every input is a list of seed-group files in seed order."""
    linear = {k: read_arrays(v) for k, v in linear_npz.items()}
    linear_figure(linear, linear_png)
    with atomic_path(linear_csv) as tmp:
        linear_marginals_table(linear).to_csv(tmp, index=False)
    cell_figure({k: read_arrays(v) for k, v in cell_npz.items()}, cell_png)
