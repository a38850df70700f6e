"""Figures of cfdg: return curves with +-1 sd bands per offline dataset; a 2-D PCA projection of real and generated
transitions; the DAG step that draws them (every seed group's files, in seed order) and the data of the main figure
(the return curves, claims.yaml's main_figure) as CSV."""

from __future__ import annotations

import numpy as np
import pandas as pd

from methods.common.io import atomic_path
from methods.common.plotting import new_figure, save_figure


def read_curves(paths: list[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(curves (V, S, n_evals) of every seed group concatenated along the seed axis, steps, variants)."""
    curves, steps, variants = [], None, None
    for path in paths:
        with np.load(path) as f:
            curves.append(f["curves"])
            steps, variants = f["steps"], list(f["variants"])
    return np.concatenate(curves, axis=1), steps, variants


def returns_table(o2o: dict[str, tuple[np.ndarray, np.ndarray, list[str]]]) -> pd.DataFrame:
    """The return figure's data, tidy: one row per (offline dataset, variant, online step) with the mean and sd
    over seeds of the normalised score."""
    rows = []
    for name in sorted(o2o):
        curves, steps, variants = o2o[name]
        for v, label in enumerate(variants):
            m = curves[v].mean(0)
            s = curves[v].std(0, ddof=1) if curves.shape[1] > 1 else 0 * m
            rows += [
                {"dataset": name, "variant": str(label), "step": int(t), "score_mean": float(a), "score_sd": float(b)}
                for t, a, b in zip(steps, m, s)
            ]
    return pd.DataFrame(rows, columns=["dataset", "variant", "step", "score_mean", "score_sd"])


def returns_figure(o2o: dict, path: str) -> None:
    """Normalised score over online steps, mean +- 1 sd over seeds, one panel per offline dataset."""
    names = sorted(o2o)
    fig, axes = new_figure(1, len(names), width=4.2 * len(names), height=3.4, squeeze=False)
    for ax, name in zip(axes[0], names):
        curves, steps, variants = o2o[name]
        for v, label in enumerate(variants):
            m, s = curves[v].mean(0), curves[v].std(0, ddof=1) if curves.shape[1] > 1 else 0 * curves[v].mean(0)
            ax.plot(steps, m, label=f"{label} (n={curves.shape[1]})")
            ax.fill_between(steps, m - s, m + s, alpha=0.2)
        ax.set(xlabel="online environment steps", ylabel="normalised score", title=f"offline data: {name}")
        ax.legend()
    save_figure(fig, path)


def projection_figure(quality_npz: str, path: str) -> None:
    """Real offline, held-out online and generated transitions projected on the first two principal axes of the
    real data (standardised)."""
    with np.load(quality_npz) as f:
        sets = {k: f[k] for k in f.files if k not in ("obs_dim", "act_dim")}
    d = sets["real_online_heldout"].shape[1] - 1
    ref = np.concatenate([sets["real_offline"][:, :d], sets["real_online_heldout"][:, :d]])
    mu, sd = ref.mean(0), ref.std(0) + 1e-6
    _, _, vt = np.linalg.svd((ref - mu) / sd, full_matrices=False)
    proj = lambda x: ((x[:, :d] - mu) / sd) @ vt[:2].T  # noqa: E731
    show = ["real_offline", "real_online_heldout", "gen_union"] + sorted(k for k in sets if k.startswith("gen_cfg_w"))
    fig, axes = new_figure(1, len(show), width=2.6 * len(show), height=2.8, squeeze=False, sharex=True, sharey=True)
    held = proj(sets["real_online_heldout"])
    for ax, key in zip(axes[0], show):
        if key != "real_online_heldout":
            ax.scatter(held[:, 0], held[:, 1], s=2, c="0.75", label="held-out online")
        p = proj(sets[key])
        ax.scatter(p[:, 0], p[:, 1], s=2, alpha=0.6)
        ax.set(title=key.replace("gen_", "generated ").replace("_", " "), xlabel="PC 1")
    axes[0][0].set_ylabel("PC 2")
    save_figure(fig, path)


def figures_job(
    o2o_npz: dict[str, list[str]], quality_npz: list[str], curves_png: str, projection_png: str, curves_csv: str
) -> None:
    """Step cfdg_figures: the return curves of every seed (and their data as CSV); the projection of the first
    seed group's samples (its first seed's, as the figure always showed)."""
    o2o = {name: read_curves(paths) for name, paths in o2o_npz.items()}
    returns_figure(o2o, curves_png)
    with atomic_path(curves_csv) as tmp:
        returns_table(o2o).to_csv(tmp, index=False)
    projection_figure(quality_npz[0], projection_png)
