"""Jobs of the mm_alignment rules (workflow/rules/mm_alignment.smk): each reads plain parameters,
computes, and writes its outputs atomically. Scripts in workflow/scripts/mm_alignment/ call these."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ..common.claims import evaluate_claims, load_declaration, write_claims
from ..common.io import log, read_json, write_json
from .experiments import real_job_results, synthetic_job_results
from .metrics import METRICS

DECLARATION = Path(__file__).with_name("claims.yaml")


def synthetic_job(uniqueness: int, hetero_depths: list[int], seeds: list[int], generator: dict, encoder: dict,
                  train: dict, train_fixed: dict, align: dict, threads: int, out_json: str) -> None:
    """Step mm_alignment_synthetic: one uniqueness level, every heterogeneity depth and seed."""
    torch.set_num_threads(threads)
    res = synthetic_job_results(uniqueness, hetero_depths, seeds, generator, encoder, train, train_fixed, align)
    write_json(out_json, res)


def real_job(source: dict, seeds: list[int], encoder: dict, train: dict, align: dict, threads: int,
             out_json: str) -> None:
    """Step mm_alignment_real: the two-view real-data stand-in."""
    torch.set_num_threads(threads)
    write_json(out_json, real_job_results(source, seeds, encoder, train, align))


def _synthetic_runs(synthetic_json: dict[int, str]) -> list[dict]:
    return [run for u in sorted(synthetic_json) for run in read_json(synthetic_json[u])["runs"]]


def claims_metrics(synthetic_json: dict[int, str], real_json: str) -> dict[str, list[float]]:
    """Flat {metric: [value per seed]}. Per (U, D) values, their mean over D, and aliases lowU/highU
    (smallest / largest uniqueness in the grid) and lowD/highD (heterogeneity) that claims.yaml reads."""
    runs = _synthetic_runs(synthetic_json)
    us = sorted({r["uniqueness"] for r in runs})
    ds = sorted({r["hetero_depth"] for r in runs})
    seeds = sorted({r["seed"] for r in runs})
    get = {(r["uniqueness"], r["hetero_depth"], r["seed"]): r["correlations"] for r in runs}
    out: dict[str, list[float]] = {}
    keys = ["perf_capacity"] + [f"{p}_{m}" for m in METRICS for p in ("align_perf", "align_capacity", "max_align")]
    for key in keys:
        for u in us:
            for d in ds:
                out[f"{key}_U{u}_D{d}"] = [get[(u, d, s)][key] for s in seeds]
            out[f"{key}_U{u}"] = list(np.mean([out[f"{key}_U{u}_D{d}"] for d in ds], axis=0))
        out[f"{key}_lowU"] = out[f"{key}_U{us[0]}"]
        out[f"{key}_highU"] = out[f"{key}_U{us[-1]}"]
        out[f"{key}_lowU_lowD"] = out[f"{key}_U{us[0]}_D{ds[0]}"]
        out[f"{key}_lowU_highD"] = out[f"{key}_U{us[0]}_D{ds[-1]}"]
    real = read_json(real_json)
    for key in keys:
        out[f"real_{key}"] = [run["correlations"][key] for run in real["runs"]]
    out["uniqueness_grid"] = [float(u) for u in us]
    out["hetero_grid"] = [float(d) for d in ds]
    return out


def write_paper_claims(synthetic_json: dict[int, str], real_json: str, scale: str, claims_path: str,
                       summary_path: str) -> None:
    """Step mm_alignment_claims: measured metrics and the verdicts of claims.yaml."""
    measured = claims_metrics(synthetic_json, real_json)
    write_json(summary_path, measured)
    doc = evaluate_claims(load_declaration(DECLARATION), {k: v for k, v in measured.items() if "grid" not in k},
                          scale, expand_over={"metric": list(METRICS)})
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))


def figures_job(synthetic_json: dict[int, str], real_json: str, correlation_png: str, scatter_png: str) -> None:
    """Step mm_alignment_figures: correlation and max alignment vs uniqueness per D; alignment vs accuracy."""
    from ..common.plotting import new_figure, save_figure

    runs = _synthetic_runs(synthetic_json)
    us = sorted({r["uniqueness"] for r in runs})
    ds = sorted({r["hetero_depth"] for r in runs})
    names = {"mutual_knn": "mutual k-NN", "unbiased_cka": "unbiased CKA"}

    fig, axes = new_figure(2, 2, width=8.5, height=6.5)
    for j, m in enumerate(METRICS):
        for d in ds:
            for i, key in enumerate((f"align_perf_{m}", f"max_align_{m}")):
                vals = np.array([[r["correlations"][key] for r in runs if r["uniqueness"] == u
                                  and r["hetero_depth"] == d] for u in us], dtype=float)
                axes[i, j].errorbar(us, np.nanmean(vals, axis=1), yerr=np.nanstd(vals, axis=1), marker="o",
                                    capsize=3, label=f"D = {d}")
        axes[0, j].axhline(0.0, color="k", lw=0.8)
        axes[0, j].set_title(f"{names[m]}: corr(alignment, accuracy) across depths")
        axes[1, j].set_title(f"{names[m]}: max alignment over depths")
        for i in range(2):
            axes[i, j].set_xlabel("uniqueness U (label bits not shared)")
            axes[i, j].legend()
        axes[0, j].set_ylabel("Pearson r (mean ± sd over seeds)")
        axes[1, j].set_ylabel("alignment")
    save_figure(fig, correlation_png)

    real = read_json(real_json)
    fig, axes = new_figure(1, 3, width=12.5, height=3.8)
    cmap = __import__("matplotlib").colormaps["viridis"]
    for j, m in enumerate(METRICS):
        for k, u in enumerate(us):
            pts = [(row["test_acc"], row[f"align_{m}"]) for r in runs if r["uniqueness"] == u
                   and r["hetero_depth"] == ds[0] for row in r["rows"]]
            acc, al = np.array(pts).T
            axes[j].scatter(acc, al, s=14, color=cmap(k / max(1, len(us) - 1)), label=f"U = {u}")
        axes[j].set_title(f"synthetic, D = {ds[0]}: {names[m]}")
        axes[j].set_xlabel("test accuracy of the modality-2 encoder")
        axes[j].set_ylabel("alignment with the fixed modality-1 encoder")
        axes[j].legend()
    for m, marker in zip(METRICS, ("o", "s")):
        acc = [row["test_acc"] for run in real["runs"] for row in run["rows"]]
        al = [row[f"align_{m}"] for run in real["runs"] for row in run["rows"]]
        axes[2].scatter(acc, al, s=14, marker=marker, label=names[m])
    axes[2].set_title(f"real stand-in ({real['source']['kind']}: left vs right half), widths vary")
    axes[2].set_xlabel("test accuracy of the right-half encoder")
    axes[2].set_ylabel("alignment with the fixed left-half encoder")
    axes[2].legend()
    save_figure(fig, scatter_png)
