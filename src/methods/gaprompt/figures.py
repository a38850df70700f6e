"""Figures: held-out accuracy against trainable parameters per method; clouds before/after the shift."""

from __future__ import annotations

import csv

import numpy as np

from methods.common.io import atomic_path, load_arrays, read_json
from methods.common.plotting import new_figure, save_figure

from .runs import read_method_runs

LABELS = {
    "linear": "linear probe",
    "untrained": "linear probe, untrained backbone",
    "vpt": "VPT-deep",
    "adapter": "adapter",
    "gaprompt": "GAPrompt",
    "full": "full fine-tuning",
}


def accuracy_figure(results: dict[str, dict], path: str) -> None:
    """Mean ± sd of held-out accuracy over seeds (dots: seeds) vs trainable parameters (log scale)."""
    fig, ax = new_figure(1, 1, width=6.0, height=4.0)
    for i, (method, r) in enumerate(results.items()):
        acc = 100 * np.asarray(r["test_acc"])
        x = r["trainable"]
        ax.scatter([x] * len(acc), acc, color=f"C{i}", alpha=0.35, s=14)
        ax.errorbar(
            [x],
            [acc.mean()],
            yerr=[acc.std(ddof=1) if len(acc) > 1 else 0],
            fmt="o",
            color=f"C{i}",
            capsize=3,
            label=f"{LABELS.get(method, method)} ({100 * r['fraction']:.1f} % trainable)",
        )
    ax.set_xscale("log")
    ax.set_xlabel("trainable parameters")
    ax.set_ylabel("held-out accuracy (%)")
    ax.set_title("Adapting a pre-trained point transformer (final epoch, per seed)")
    ax.legend(loc="best", fontsize=7)
    save_figure(fig, path)


def shift_figure(arrays: dict, path: str, classes: list[str] | None = None) -> None:
    """A few test clouds before (grey) and after (blue) the Point Shift Prompter, and the point prompts."""
    if "before" not in arrays:
        fig, ax = new_figure(1, 1)
        ax.text(0.5, 0.5, "no GAPrompt run", ha="center")
        save_figure(fig, path)
        return
    before, after = arrays["before"], arrays["after"]
    n = len(before)
    fig, axes = new_figure(2, n, width=2.2 * n, height=4.6, squeeze=False, subplot_kw={"projection": "3d"})
    for j in range(n):
        for row, pts, color, title in ((0, before[j], "0.4", "input"), (1, after[j], "C0", "after shift")):
            ax = axes[row][j]
            ax.scatter(pts[:, 0], pts[:, 1], pts[:, 2], s=1.5, color=color)
            if row == 1:
                pp = arrays["point_prompts"]
                ax.scatter(pp[:, 0], pp[:, 1], pp[:, 2], s=25, color="C3", marker="*")
            move = np.linalg.norm(after[j] - before[j], axis=1).mean()
            ax.set_title(
                f"{title}"
                + (
                    f"\nmean shift {move:.3f}"
                    if row == 1
                    else f": {classes[arrays['labels'][j]] if classes else arrays['labels'][j]}"
                ),
                fontsize=7,
            )
            ax.set_axis_off()
    save_figure(fig, path)


def accuracy_rows(results: dict[str, dict]) -> list[dict]:
    """The data of the accuracy figure, one row per method and seed (tidy columns for `dvc plots`)."""
    return [
        {"method": method, "seed": seed, "trainable": r["trainable"], "fraction": r["fraction"], "test_acc": acc}
        for method, r in results.items()
        for seed, acc in zip(r["seeds"], r["test_acc"])
    ]


def write_rows(path: str, rows: list[dict]) -> None:
    """A CSV file with a header (the columns of the first row), written atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def figures_job(
    method_json: dict[str, list[str]], shift_npz: str, data_info: str, acc_png: str, acc_csv: str, shift_png: str
) -> None:
    """Step gaprompt_figures: accuracy vs trainable parameters (Table 1 as a figure, with its data as CSV) and the
    shift prompter's effect on a few test clouds (Fig. 3)."""
    results = read_method_runs(method_json)
    accuracy_figure(results, acc_png)
    write_rows(acc_csv, accuracy_rows(results))
    shift_figure(load_arrays(shift_npz), shift_png, read_json(data_info)["classes"])
