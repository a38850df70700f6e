"""Step banyan_figures: Spearman rho of every variant (per seed) beside MiniLM, and its data as CSV (the
main figure, `dvc plots`); training-loss curves."""

from __future__ import annotations

import csv

import numpy as np

from methods.common.io import atomic_path, load_arrays, read_json
from methods.common.plotting import new_figure, save_figure

from .results import read_variant

LABELS = {
    "banyan": "Banyan (14 params)",
    "no_entangle": "no entanglement",
    "dense": "dense composition",
    "mean": "mean of embeddings",
}
COLORS = {"banyan": "C0", "no_entangle": "C1", "dense": "C2", "mean": "C7"}


def scores_figure(metrics: dict[str, dict], minilm: dict, path: str) -> None:
    """Per metric (sentence and word level): one dot per seed and the mean bar per variant; MiniLM dashed."""
    keys = [
        k
        for k in ("sts_mean", "word_mean")
        if any(np.isfinite(np.asarray(m[k], float)).any() for m in metrics.values())
    ]
    fig, axes = new_figure(1, len(keys), width=5 * len(keys), height=3.6, squeeze=False)
    for ax, key in zip(axes[0], keys):
        for x, (variant, m) in enumerate(metrics.items()):
            vals = np.asarray(m[key], float)
            ax.bar(x, np.nanmean(vals), color=COLORS.get(variant, "C3"), alpha=0.6)
            ax.plot(np.full(len(vals), x), vals, "k.", ms=6)
        ref = np.asarray(minilm.get(key, np.nan), float)
        if np.isfinite(ref).any():
            ax.axhline(
                np.nanmean(ref), color="k", ls="--", lw=1, label="MiniLM (pretrained reference, mean over draws)"
            )
            ax.legend(loc="best")
        ax.set_xticks(range(len(metrics)), [LABELS.get(v, v) for v in metrics], rotation=20, ha="right")
        ax.set_ylabel("Spearman rho")
        ax.set_title({"sts_mean": "sentence similarity", "word_mean": "word similarity"}[key])
    save_figure(fig, path)


def loss_figure(arrays: dict[str, dict], path: str) -> None:
    """Reconstruction loss per step, every seed (entangled variants average over token types, the others
    over token occurrences, so the levels are not comparable across those two groups)."""
    fig, axes = new_figure(1, 1, width=6.4, height=3.6, squeeze=False)
    ax = axes[0][0]
    for variant, a in arrays.items():
        for i, key in enumerate(sorted(k for k in a if k.startswith("loss_seed"))):
            ax.plot(
                a[key], color=COLORS.get(variant, "C3"), lw=0.8, label=LABELS.get(variant, variant) if i == 0 else None
            )
    ax.set_xlabel("step")
    ax.set_ylabel("reconstruction cross-entropy")
    ax.legend(loc="best")
    save_figure(fig, path)


def score_rows(metrics: dict[str, dict], minilm: dict) -> list[dict]:
    """The data of the scores figure: per variant (and MiniLM, the reference) the mean and sd over seeds
    of sts_mean and word_mean (NaN where undefined)."""
    rows = []
    for variant, m in [*metrics.items(), ("minilm", minilm)]:
        row = {"variant": variant, "n_seeds": len(np.atleast_1d(m["sts_mean"]))}
        for key in ("sts_mean", "word_mean"):
            vals = np.asarray(m.get(key, np.nan), float).ravel()
            vals = vals[np.isfinite(vals)]
            row[key] = float(vals.mean()) if len(vals) else float("nan")
            row[f"{key}_sd"] = float(vals.std(ddof=1)) if len(vals) > 1 else 0.0
        rows.append(row)
    return rows


def write_rows(rows: list[dict], path: str) -> None:
    """Tidy rows as CSV (header from the first row), written atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def figures_job(
    metrics_json: dict[str, list[str]],
    arrays_npz: dict[str, list[str]],
    minilm_json: str,
    out_scores: str,
    out_curves: str,
    out_scores_csv: str,
) -> None:
    """Step banyan_figures (each variant's files: one per seed group)."""
    metrics = {v: read_variant(paths) for v, paths in metrics_json.items()}
    minilm = read_json(minilm_json)
    scores_figure(metrics, minilm, out_scores)
    write_rows(score_rows(metrics, minilm), out_scores_csv)
    loss_figure(
        {v: {k: a for p in paths for k, a in load_arrays(p).items()} for v, paths in arrays_npz.items()}, out_curves
    )
