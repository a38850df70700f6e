"""Figures of winwinlay: toy attention maps, sample grids, the control/realism trade-off."""

from __future__ import annotations

import csv

import numpy as np

from methods.common.io import atomic_path, load_arrays, read_json
from methods.common.plotting import new_figure, save_figure

from .canvas import DIGIT


def _box(ax, x0, y0, x1, y1, color="red"):
    ax.plot([x0, x1, x1, x0, x0], [y0, y0, y1, y1, y0], color=color, lw=1)


def toy_figure(arrays: dict, path: str, n_show: int = 4) -> None:
    """Rows: initial map, common energy, non-local energy, BoxDiff (latent parameterisation); box in red."""
    kinds = ["init"] + [k for k in ("maps_common_latent", "maps_nonlocal_latent", "maps_boxdiff_latent") if k in arrays]
    n_show = min(n_show, len(arrays["init"]))
    fig, axes = new_figure(len(kinds), n_show, width=2.0 * n_show, height=2.0 * len(kinds), squeeze=False)
    g = arrays["init"].shape[-1]
    for r, kind in enumerate(kinds):
        for c in range(n_show):
            ax = axes[r][c]
            ax.imshow(arrays[kind][c], cmap="viridis")
            x0, y0, x1, y1 = arrays["boxes"][c, 0] * g - 0.5
            _box(ax, x0, y0, x1, y1)
            ax.set_xticks([])
            ax.set_yticks([])
            if c == 0:
                ax.set_ylabel(
                    {
                        "init": "initial",
                        "maps_common_latent": "common E",
                        "maps_nonlocal_latent": "non-local E",
                        "maps_boxdiff_latent": "BoxDiff E",
                    }[kind]
                )
    fig.suptitle("Attention maps optimised under each energy (box in red)")
    save_figure(fig, path)


def samples_figure(arrays: dict, methods: list[str], path: str) -> None:
    """Rows: real canvases with the requested layout, then each method's samples (seed of the first file)."""
    rows = ["real"] + [f"samples_{m}" for m in methods]
    n = arrays["real"].shape[0]
    fig, axes = new_figure(len(rows), n, width=1.3 * n, height=1.4 * len(rows), squeeze=False)
    for r, key in enumerate(rows):
        for c in range(n):
            ax = axes[r][c]
            ax.imshow(arrays[key][c], cmap="gray", vmin=-1, vmax=1)
            for row, col in arrays["corners"][c]:
                _box(ax, col - 0.5, row - 0.5, col + DIGIT - 0.5, row + DIGIT - 0.5)
            ax.set_xticks([])
            ax.set_yticks([])
            if c == 0:
                ax.set_ylabel(key.replace("samples_", ""), fontsize=8)
    fig.suptitle("Requested boxes (red) and generated canvases per method")
    save_figure(fig, path)


def tradeoff_figure(runs: list[dict], methods: list[str], path: str) -> None:
    """Layout mIoU against the Frechet-distance proxy, mean and sd over seeds per method."""
    fig, ax = new_figure(1, 1, width=6.0, height=4.5)
    for m in methods:
        iou = np.array([r[m]["miou"] for r in runs])
        fd = np.array([r[m]["fd"] for r in runs])
        ax.errorbar(fd.mean(), iou.mean(), xerr=fd.std(), yerr=iou.std(), fmt="o", capsize=3, label=m)
    ax.set_xlabel("Frechet distance in PCA features to real canvases (proxy, lower = more realistic)")
    ax.set_ylabel("layout mIoU (detector)")
    ax.legend(fontsize=8)
    ax.set_title("Control vs realism")
    save_figure(fig, path)


def tradeoff_rows(runs: list[dict], methods: list[str]) -> list[dict]:
    """The data of the trade-off figure, one row per method and seed (tidy columns for `dvc plots`)."""
    return [
        {"method": m, "seed": r["seed"], "fd": r[m]["fd"], "miou": r[m]["miou"], "acc50": r[m]["acc50"]}
        for m in methods
        for r in runs
    ]


def write_rows(path: str, rows: list[dict]) -> None:
    """A CSV file with a header (the columns of the first row), written atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def figures_job(
    toy_npz: str,
    guide_npz: list[str],
    guide_json: list[str],
    methods: list[str],
    toy_png: str,
    samples_png: str,
    tradeoff_png: str,
    tradeoff_csv: str,
) -> None:
    """Step winwinlay_figures: the toy maps (experiment 1), sample grids and the control/realism trade-off
    (experiment 2, with its data as CSV)."""
    toy_figure(load_arrays(toy_npz), toy_png)
    samples_figure(load_arrays(guide_npz[0]), methods, samples_png)
    runs = [read_json(p) for p in guide_json]
    tradeoff_figure(runs, methods, tradeoff_png)
    write_rows(tradeoff_csv, tradeoff_rows(runs, methods))
