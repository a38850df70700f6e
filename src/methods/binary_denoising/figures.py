"""The figures of binary_denoising (binary_denoising_figures, binary_denoising_grid_figure): mixing vs alpha,
sample quality vs the number of measurements m (and its data file, the paper's main figure for `dvc plots`), the
exact enumeration of the one-stage chain, and the sample grids."""

from __future__ import annotations

import csv

import numpy as np

from methods.common.io import atomic_path, read_json
from methods.common.plotting import new_figure, save_figure

from .exact import merged_exact_runs


def _write_csv(path: str, rows: list[dict]) -> None:
    """A tidy CSV (one row per point, the columns of the first row), written atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def plot_sample_grid(npz_path: str, dataset: str, out_png: str) -> None:
    """Rows: samples after m = 1, 2, ... measurements (last row: held-out data)."""
    z = np.load(npz_path)
    rows = list(z["grid"]) + [z["data"]]
    n_rows, n_cols = len(rows), rows[0].shape[0]
    fig, axes = new_figure(n_rows, n_cols, width=0.6 * n_cols + 1, height=0.6 * n_rows + 0.5, squeeze=False)
    for r, row in enumerate(rows):
        for c in range(n_cols):
            ax = axes[r, c]
            ax.imshow(row[c], cmap="gray_r", vmin=-1, vmax=1)
            ax.set_xticks([])
            ax.set_yticks([])
            ax.grid(False)
            ax.spines[:].set_visible(False)  # images need no axis lines
        axes[r, 0].set_ylabel("data" if r == n_rows - 1 else f"m={r + 1}", fontsize=7)
    fig.suptitle(f"{dataset}: sign(E[x | y_1..y_m]) of sequential samples")
    save_figure(fig, out_png)


def plot_mixing(mixture_files: list[str], out_png: str) -> None:
    """ESS per step vs alpha (mean over seeds) for both samplers."""
    docs = [read_json(f) for f in mixture_files]
    alphas = docs[0]["alphas"]
    fig, ax = new_figure(width=5, height=3.5)
    for kind in ("langevin", "two_stage"):
        vals = np.array([[doc["mixing"][str(a)][kind] for a in alphas] for doc in docs])
        ax.errorbar(alphas, vals.mean(0), yerr=vals.std(0), marker="o", label=kind)
    ax.set_xlabel("alpha (larger = less noise)")
    ax.set_ylabel("ESS per step (slowest component)")
    ax.set_yscale("log")
    ax.legend()
    save_figure(fig, out_png)


def quality_rows(mixture_files: list[str], digits_files: dict) -> list[dict]:
    """The data of the quality-vs-m figure: per m, the energy distance to held-out data (mean over seeds) of
    the mixture's learned denoiser and of each digits dataset (one column each)."""
    groups = {"mixture": [read_json(f)["quality"]["learned"] for f in mixture_files]}
    groups.update({ds: [read_json(f)["quality"] for f in files] for ds, files in digits_files.items()})
    rows: dict[int, dict] = {}
    for name, quals in groups.items():
        for m in sorted(int(k) for k in quals[0] if k.isdigit()):  # the nulls (1_equal_budget, marginals) aside
            vals = [q[str(m)]["energy"] for q in quals]
            rows.setdefault(m, {"m": m}).update({name: float(np.mean(vals)), f"{name}_std": float(np.std(vals))})
    return [rows[m] for m in sorted(rows)]


def plot_quality(mixture_files: list[str], digits_files: dict, out_png: str, out_csv: str) -> None:
    """Energy distance to held-out data vs the number of measurements m, per dataset; its data as a CSV."""
    rows = quality_rows(mixture_files, digits_files)
    _write_csv(out_csv, rows)
    fig, ax = new_figure(width=5, height=3.5)
    names = [k for k in rows[0] if k != "m" and not k.endswith("_std")]
    for name in names:
        pts = [r for r in rows if name in r]
        ax.errorbar(
            [r["m"] for r in pts], [r[name] for r in pts], yerr=[r[f"{name}_std"] for r in pts], marker="o", label=name
        )
    ax.set_xlabel("measurements m (fixed alpha)")
    ax.set_ylabel("energy distance / sqrt(d)")
    ax.legend()
    save_figure(fig, out_png)


def plot_exact(exact_files: list[str], out_png: str) -> None:
    """Exact enumeration: SLEM and Dobrushin's rate against alpha (left), TV bias of the unadjusted chain (right)."""
    docs = merged_exact_runs(exact_files)
    fig, (ax1, ax2) = new_figure(1, 2, width=10, height=3.8)
    for i, doc in enumerate(docs):
        rows = sorted(doc["rows"], key=lambda r: r["alpha"])
        a = [r["alpha"] for r in rows]
        lab = i == 0
        ax1.plot(a, [r["slem"] for r in rows], "o-", color="C0", label="measured (SLEM)" if lab else None)
        ax1.plot(
            a,
            [r["dobrushin"] for r in rows],
            "s--",
            color="C3",
            label="theory (Dobrushin coefficient)" if lab else None,
        )
        for j, e in enumerate(sorted(doc["etas"], key=float)):
            ax2.plot(
                a,
                [r["bias_tv"][str(e)] for r in rows],
                "o-",
                color=f"C{j}",
                alpha=0.8,
                label=f"unadjusted, eta={e}" if lab else None,
            )
    ax1.axhline(1.0, color="grey", lw=0.8)
    ax1.set(
        xscale="log",
        xlabel="alpha (small = high noise)",
        ylabel="contraction rate per step",
        title=f"one-stage chain, d={docs[0]['d']} ({docs[0]['n_states']} states), one line per seed",
    )
    ax2.set(xscale="log", xlabel="alpha", ylabel="TV(stationary law, q_alpha)", title="bias of the unadjusted chain")
    ax1.legend(fontsize=8)
    ax2.legend(fontsize=8)
    save_figure(fig, out_png)
