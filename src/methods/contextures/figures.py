"""Step contextures_figures: tau vs err_{d*} per dataset, and CCA vs encoder width (and its data, for
`dvc plots`)."""

from __future__ import annotations

import csv

from methods.common.io import atomic_path
from methods.common.plotting import new_figure, save_figure

from .outputs import merge_datasets, merge_scaling

KINDS = (("knn", "o"), ("rbf", "s"), ("knn_mask", "^"), ("rbf_mask", "v"), ("label", "*"))


def write_metric_csv(docs: list[dict], path: str) -> None:
    """The metric figure's points (claims.yaml's main_figure): per dataset, on its first split seed, each
    context's tau and err_{d*}."""
    with atomic_path(path) as tmp:
        with open(tmp, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["dataset", "seed", "kind", "level", "tau", "err"])
            for doc in docs:
                run = doc["runs"][0]
                for r in run["contexts"]:
                    w.writerow(
                        [
                            doc["dataset"],
                            run["seed"],
                            r["kind"],
                            f"{r['level']:.6g}",
                            f"{r['tau']:.6g}",
                            f"{r['err']:.6g}",
                        ]
                    )


def make_figures(
    dataset_jsons: list[str], scaling_jsons: list[str], metric_png: str, scaling_png: str, metric_csv: str
) -> None:
    """tau vs err_{d*} per dataset (first split seed) and its data; CCA vs width, one line per seed."""
    docs = merge_datasets(dataset_jsons)
    fig, axes = new_figure(1, len(docs), width=3.2 * len(docs), height=3.2, squeeze=False)
    for ax, doc in zip(axes[0], docs):
        run = doc["runs"][0]
        for kind, marker in KINDS:
            pts = [(r["tau"], r["err"]) for r in run["contexts"] if r["kind"] == kind]
            if pts:
                ax.scatter(*zip(*pts), marker=marker, label=kind, alpha=0.8)
        c = run["correlations"]["paper_set"]["tau"]
        ax.set_title(f"{doc['dataset']} (A = X: Pearson {c['pearson']:.2f}, Spearman {c['spearman']:.2f})", fontsize=8)
        ax.set_xlabel("context metric tau")
        ax.set_ylabel("probe error err_d*")
    axes[0][0].legend()
    save_figure(fig, metric_png)
    write_metric_csv(docs, metric_csv)
    sc = merge_scaling(scaling_jsons)
    fig, ax = new_figure(width=5, height=3.5)
    for seed, vals in sc["cca"].items():
        ax.plot(sc["widths"], vals, marker="o", alpha=0.7, label=f"seed {seed}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("encoder width")
    ax.set_ylabel(f"mean CCA to the exact top-{sc['d']} functions")
    ax.set_title(f"{sc['dataset']}, KNN context K={sc['k']}")
    ax.legend()
    save_figure(fig, scaling_png)
