"""The figures of metacognition (metacognition_figures): competence curves of every agent in the changing and
stationary environments (and their data file, the main figure for `dvc plots`) and the ablation bars."""

from __future__ import annotations

import csv

import numpy as np

from methods.common.io import atomic_path, concat_arrays
from methods.common.plotting import new_figure, save_figure

from .model import AGENTS
from .summary import merge_seed_groups


def curve_rows(curves: dict[str, np.ndarray]) -> list[dict]:
    """The data of the competence-curve figure: per practice step, the seed-mean competence of every agent in
    the changing environment (one column each)."""
    means = {k.split("/", 1)[1]: c.mean(axis=0) for k, c in curves.items() if k.startswith("changing/")}
    steps = len(next(iter(means.values())))
    return [{"step": t, **{kind: float(m[t]) for kind, m in means.items()}} for t in range(steps)]


def _write_csv(path: str, rows: list[dict]) -> None:
    """A tidy CSV (one row per point, the columns of the first row), written atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def make_figures(
    test_files: list[str],
    curves_files: list[str],
    switch_at: int | None,
    new_family_at: int | None,
    curves_png: str,
    curves_csv: str,
    ablation_png: str,
) -> None:
    """Step metacognition_figures, from metacognition_evaluate's seed groups merged in seed order."""
    doc = merge_seed_groups(test_files)
    curves = concat_arrays(curves_files)
    _write_csv(curves_csv, curve_rows(curves))
    fig, axes = new_figure(1, 2, width=11, height=3.6)
    colors = {kind: f"C{i}" for i, kind in enumerate(AGENTS)}  # one colour per agent in both panels
    for ax, setting in zip(axes, ("changing", "stationary")):
        for kind in doc[setting]:
            c = curves[f"{setting}/{kind}"]
            # the full agent drawn dashed on top: a tuned ablation can coincide with it
            style = {"ls": "--", "lw": 2.2, "zorder": 3} if kind == "metacognitive" else {}
            ax.plot(c.mean(axis=0), label=kind, color=colors[kind], **style)
        if setting == "changing":
            for x, label in ((switch_at, "strategies switch"), (new_family_at, "new family")):
                if x is not None:
                    ax.axvline(x, color="grey", ls="--", lw=0.8)
                    ax.text(x, 0.02, label, fontsize=7, rotation=90, va="bottom")
        ax.set_xlabel("practice step")
        ax.set_ylabel("mean competence (learnable families)")
        ax.set_title(f"{setting} environment (illustrative)")
        ax.legend(fontsize=7)
    save_figure(fig, curves_png)

    fig, ax = new_figure(width=6, height=3.6)
    kinds = list(doc["changing"])
    aucs = [doc["changing"][k]["auc"] for k in kinds]
    ax.bar(kinds, [np.mean(a) for a in aucs], yerr=[np.std(a) for a in aucs], capsize=3)
    ax.set_ylabel("AUC of mean competence (test seeds)")
    ax.set_title("fixed loops, the metacognitive agent and its ablations")
    ax.tick_params(axis="x", rotation=30)
    save_figure(fig, ablation_png)
