"""The figures of human_data (human_data_figures): outcomes over time per design (and its data file, the main
figure for `dvc plots`), the quantity-quality scatter and the sensitivity sweep."""

from __future__ import annotations

import csv

import numpy as np

from methods.common.io import atomic_path, concat_arrays
from methods.common.plotting import new_figure, save_figure

from .summary import merge_seed_groups


def over_time_rows(designs: list[str], curves: dict[str, np.ndarray]) -> list[dict]:
    """The data of the over-time figure: per round, the seed-mean share of genuinely human labels of every
    design (one column each; empty where nobody submitted)."""
    means = {name: np.nanmean(curves[f"{name}/human_share"], axis=0) for name in designs}
    rounds = len(next(iter(means.values())))
    return [
        {"round": t, **{name: ("" if np.isnan(m[t]) else float(m[t])) for name, m in means.items()}}
        for t in range(rounds)
    ]


def _write_csv(path: str, rows: list[dict]) -> None:
    """A tidy CSV (one row per point, the columns of the first row), written atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def make_figures(
    simulation_files: list[str],
    curves_files: list[str],
    time_png: str,
    time_csv: str,
    frontier_png: str,
    sweep_png: str,
) -> None:
    """Step human_data_figures, from the simulation's seed groups merged in seed order."""
    doc = merge_seed_groups(simulation_files)
    curves = concat_arrays(curves_files)
    _write_csv(time_csv, over_time_rows(doc["designs"], curves))
    fig, axes = new_figure(1, 3, width=12, height=3.4)
    for ax, key, label in zip(
        axes,
        ("human_share", "accuracy", "retention"),
        ("share of genuinely human labels", "label accuracy", "retention"),
    ):
        for name in doc["designs"]:
            c = curves[f"{name}/{key}"]
            mean = np.nanmean(c, axis=0)
            ax.plot(mean, label=name)
            ax.fill_between(np.arange(len(mean)), np.nanmin(c, axis=0), np.nanmax(c, axis=0), alpha=0.15)
        ax.set_xlabel("round")
        ax.set_title(label)
    axes[0].legend()
    fig.suptitle("Illustrative simulation (the project's model, not data from the paper)")
    save_figure(fig, time_png)

    fig, ax = new_figure(width=5, height=4)
    for name in doc["designs"]:
        ps = doc["per_seed"][name]
        ax.scatter(ps["quantity"], ps["human_share_late"], label=name, alpha=0.7)
    ax.set_xlabel("labels per contributor per round (quantity)")
    ax.set_ylabel("human share of labels, last rounds (quality)")
    ax.set_title("quantity vs quality per design (one point per seed)")
    ax.legend()
    save_figure(fig, frontier_png)

    sweeps = doc["sweep"]["results"]
    fig, axes = new_figure(1, len(sweeps), width=4 * len(sweeps), height=3.4, squeeze=False)
    for ax, (param, rows) in zip(axes[0], sweeps.items()):
        xs = [r["value"] for r in rows]
        for name in doc["sweep"]["designs"]:
            ax.plot(xs, [np.mean(r["human_share_late"][name]) for r in rows], marker="o", label=name)
        ax.set_xlabel(param)
        ax.set_ylabel("human share, last rounds")
    axes[0][0].legend()
    save_figure(fig, sweep_png)
