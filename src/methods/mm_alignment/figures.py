"""Figures of mm_alignment (step mm_alignment_figures): correlation and maximum alignment against
uniqueness per heterogeneity depth (and its data as CSV, the main figure of `dvc plots`), and alignment
against accuracy per encoder."""

from __future__ import annotations

import csv

import matplotlib
import numpy as np

from ..common.io import atomic_path
from ..common.plotting import new_figure, save_figure
from .metrics import METRICS
from .results import read_groups, synthetic_runs


def correlation_rows(runs: list[dict]) -> list[dict]:
    """The data of the correlation figure, one row per uniqueness U: the Pearson correlation of alignment
    and accuracy over encoder depths (`r_<metric>`) and the maximum alignment (`max_align_<metric>`), means
    over seeds and heterogeneity depths, then the same per depth (`..._D<d>`)."""
    us = sorted({r["uniqueness"] for r in runs})
    ds = sorted({r["hetero_depth"] for r in runs})
    rows = []
    for u in us:
        row = {"uniqueness": u}
        for m in METRICS:
            for name, key in ((f"r_{m}", f"align_perf_{m}_pearson"), (f"max_align_{m}", f"max_align_{m}")):
                per_d = {
                    d: np.nanmean(
                        [
                            float("nan") if r["correlations"][key] is None else r["correlations"][key]
                            for r in runs
                            if r["uniqueness"] == u and r["hetero_depth"] == d
                        ]
                    )
                    for d in ds
                }
                row[name] = float(np.nanmean(list(per_d.values())))
                row.update({f"{name}_D{d}": float(v) for d, v in per_d.items()})
        rows.append(row)
    return rows


def write_rows(rows: list[dict], path: str) -> None:
    """Tidy rows as CSV (header from the first row), written atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def figures_job(
    synthetic_json: dict[int, list[str]],
    real_json: list[str],
    correlation_png: str,
    scatter_png: str,
    correlation_csv: str,
) -> None:
    """Step mm_alignment_figures: correlation and max alignment vs uniqueness per D (and its data as CSV);
    alignment vs accuracy (each step's files: one per seed group)."""
    runs = synthetic_runs(synthetic_json)
    us = sorted({r["uniqueness"] for r in runs})
    ds = sorted({r["hetero_depth"] for r in runs})
    names = {"mutual_knn": "mutual k-NN", "unbiased_cka": "unbiased CKA"}

    fig, axes = new_figure(2, 2, width=9.5, height=6.5)
    for j, m in enumerate(METRICS):
        for d in ds:
            for i, key in enumerate((f"align_perf_{m}_pearson", f"max_align_{m}")):
                vals = np.array(
                    [
                        [r["correlations"][key] for r in runs if r["uniqueness"] == u and r["hetero_depth"] == d]
                        for u in us
                    ],
                    dtype=float,
                )
                axes[i, j].errorbar(
                    us, np.nanmean(vals, axis=1), yerr=np.nanstd(vals, axis=1), marker="o", capsize=3, label=f"D = {d}"
                )
        axes[0, j].axhline(0.0, color="k", lw=0.8)
        axes[0, j].set_title(f"{names[m]}: r(alignment, accuracy) over depths")
        axes[1, j].set_title(f"{names[m]}: max alignment over depths")
        for i in range(2):
            axes[i, j].set_xlabel("uniqueness U (label bits not shared)")
            axes[i, j].legend()
        axes[0, j].set_ylabel("Pearson r (mean ± sd over seeds)")
        axes[1, j].set_ylabel("alignment")
    save_figure(fig, correlation_png)
    write_rows(correlation_rows(runs), correlation_csv)

    real = read_groups(real_json)
    fig, axes = new_figure(1, 3, width=12.5, height=3.8)
    cmap = matplotlib.colormaps["viridis"]
    for j, m in enumerate(METRICS):
        for k, u in enumerate(us):
            pts = [
                (row["test_acc"], row[f"align_{m}"])
                for r in runs
                if r["uniqueness"] == u and r["hetero_depth"] == ds[0]
                for row in r["rows"]
            ]
            acc, al = np.array(pts).T
            axes[j].scatter(acc, al, s=14, color=cmap(k / max(1, len(us) - 1)), label=f"U = {u}")
        axes[j].set_title(f"synthetic, D = {ds[0]}: {names[m]}")
        axes[j].set_xlabel("test accuracy of the modality-2 encoder")
        axes[j].set_ylabel("alignment with the fixed modality-1 encoder")
        axes[j].legend()
    if "pairs" in real["runs"][0]:  # multi-view study: each ordered view pair's sweep, coloured by uniqueness
        pts = [
            (row["test_acc"], row["align_mutual_knn"], pair["uniqueness"])
            for run in real["runs"]
            for pair in run["pairs"]
            for row in pair["rows"]
        ]
        acc, al, uq = np.array(pts).T
        sc = axes[2].scatter(acc, al, s=8, c=uq, cmap="viridis")
        fig.colorbar(sc, ax=axes[2], label="pair uniqueness")
        axes[2].set_title("UCI Multiple Features: 30 view pairs, mutual k-NN")
        axes[2].set_xlabel("test accuracy of the view-b encoder")
        axes[2].set_ylabel("alignment with the fixed view-a encoder")
    else:
        for m, marker in zip(METRICS, ("o", "s")):
            acc = [row["test_acc"] for run in real["runs"] for row in run["rows"]]
            al = [row[f"align_{m}"] for run in real["runs"] for row in run["rows"]]
            axes[2].scatter(acc, al, s=14, marker=marker, label=names[m])
        axes[2].set_title(f"real stand-in: {real['source']['kind']}, left vs right half")
        axes[2].set_xlabel("test accuracy of the right-half encoder")
        axes[2].set_ylabel("alignment with the fixed left-half encoder")
        axes[2].legend()
    save_figure(fig, scatter_png)
