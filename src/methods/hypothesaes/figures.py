"""The claims step's figure: each method's recovery F1 on the synthetic designs and its number of
significant hypotheses on each real text set, and the data of its headline panel as a CSV (for `dvc plots`)."""

from __future__ import annotations

import csv

import numpy as np

from methods.common.io import atomic_path
from methods.common.plotting import new_figure, save_figure

METHODS = ("sae", "pca", "raw", "lda")
# the real sets, each a panel of significant hypotheses where it ran
REAL_PANELS = {
    "real": "real text: joint OLS, Bonferroni",
    "convention": "convention speech: joint Logit, Bonferroni",
    "rotten": "Rotten Tomatoes: joint Logit, Bonferroni",
}


def plot_methods(metrics: dict, path: str) -> None:
    panels = [("f1_{}", "recovery F1 of reference hypotheses", "synthetic: 20 concepts (one draw per seed)")]
    if "f1_sae_first" in metrics:
        panels.append(("f1_{}_first", "recovery F1 of reference hypotheses", "synthetic: first design, 10 concepts"))
    for name, title in REAL_PANELS.items():
        if f"nsig_sae_{name}" in metrics:
            panels.append((f"nsig_{{}}_{name}", "significant hypotheses (held out)", title))
    nrows = 1 if len(panels) <= 3 else 2
    ncols = -(-len(panels) // nrows)
    fig, axes = new_figure(nrows, ncols, width=4.5 * ncols, height=3.6 * nrows, squeeze=False)
    axes = axes.ravel()
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    for ax, (key, ylabel, title) in zip(axes, panels):
        for i, m in enumerate(METHODS):
            vals = np.asarray(metrics[key.format(m)], dtype=float)
            ax.bar(
                i,
                vals.mean(),
                color="C0" if m == "sae" else "0.7",
                yerr=vals.std(ddof=1) if len(vals) > 1 else 0,
                capsize=4,
            )
            ax.plot(np.full(len(vals), i) + np.linspace(-0.15, 0.15, len(vals)), vals, "k.", ms=5)
        ax.set_xticks(range(len(METHODS)), [m.upper() for m in METHODS])
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        if key.startswith("f1"):
            ax.set_ylim(0, 1.05)
    save_figure(fig, path)


def write_recovery_csv(metrics: dict, path: str) -> None:
    """The headline panel's data, one row per method: mean recovery F1 over the synthetic draws, its standard
    deviation and the number of draws (claims.yaml's main_figure)."""
    with atomic_path(path) as tmp:
        with open(tmp, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["method", "recovery_f1", "sd", "draws"])
            for m in METHODS:
                vals = np.asarray(metrics[f"f1_{m}"], dtype=float)
                w.writerow(
                    [m.upper(), f"{vals.mean():.6g}", f"{vals.std(ddof=1) if len(vals) > 1 else 0.0:.6g}", len(vals)]
                )
