"""Figures (rule alspec_figures): quality and hit rate vs λ per task (and its data, figures/quality.csv, for
`dvc plots`); decode latency vs hit rate and vs context (cost model)."""

from __future__ import annotations

import csv

import numpy as np

from methods.common.io import atomic_path, read_json
from methods.common.plotting import new_figure, save_figure

from . import costmodel


def plot_quality(docs: list[dict], lams, path) -> None:
    """One panel per task: ALSpec quality vs λ with exact and static as horizontal lines; hit rate on the right."""
    fig, axes = new_figure(1, len(docs), width=3.2 * len(docs), height=3.2)
    axes = np.atleast_1d(axes)
    for ax, doc in zip(axes, docs):
        key = "perplexity" if doc["kind"] == "perplexity" else "accuracy"
        modes = doc["modes"]
        names = [f"alspec_{lam:.2f}" for lam in lams]
        ax.plot(lams, [modes[n][key] for n in names], "o-", color="C0", label="ALSpec")
        ax.axhline(modes["exact"][key], color="k", lw=1, label="exact")
        ax.axhline(modes["static"][key], color="C3", ls="--", lw=1, label="static sink+window")
        ax.set_xlabel("λ")
        ax.set_ylabel(key)
        ax.set_title(f"{doc['task']} (T={doc['context']}, S={doc['sink']}+{doc['window']})")
        twin = ax.twinx()
        twin.plot(lams, [modes[n]["hit_rate"] for n in names], "s:", color="C2", label="hit rate")
        twin.set_ylim(-0.02, 1.02)
        twin.set_ylabel("hit rate", color="C2")
    axes[0].legend(loc="best")
    save_figure(fig, path)


def plot_timing(timing: dict, extrapolate_to: int, path) -> None:
    """Left: measured two-worker latency vs hit rate with the model; right: the model up to 128K."""
    k, meas = timing["kernels"], timing["measured"]
    t_comm = meas["comm_round_trip_s"]
    fig, (a, b) = new_figure(1, 2, width=10, height=3.8)
    hs = np.array([r["hit_rate"] for r in meas["by_hit_rate"]])
    a.plot(
        hs, [r["alspec_s"] * 1e3 for r in meas["by_hit_rate"]], "o", color="C0", label="ALSpec, 2 workers (measured)"
    )
    a.axhline(meas["sequential_s"] * 1e3, color="k", label="sequential, 1 core (measured)")
    grid = np.linspace(0, 1, 21)
    a.plot(
        grid,
        [costmodel.step_latency(k, meas["context"], h, t_comm, "alspec") * 1e3 for h in grid],
        "--",
        color="C0",
        label="ALSpec (cost model)",
    )
    a.axhline(
        costmodel.step_latency(k, meas["context"], 0, t_comm, "sequential") * 1e3,
        ls="--",
        color="gray",
        label="sequential (cost model)",
    )
    a.set_xlabel("hit rate")
    a.set_ylabel("decode latency per token (ms)")
    a.set_title(f"context {meas['context']}, medians")
    a.legend(fontsize=7)
    ctx = np.geomspace(min(k["contexts"]), extrapolate_to, 40)
    b.plot(ctx, costmodel.step_latency(k, ctx, 0, t_comm, "sequential") * 1e3, color="k", label="sequential")
    for h, style in ((1.0, "-"), (0.5, "--")):
        b.plot(
            ctx,
            costmodel.step_latency(k, ctx, h, t_comm, "alspec") * 1e3,
            style,
            color="C0",
            label=f"ALSpec, hit rate {h:.1f}",
        )
    kc = np.asarray(k["contexts"], float)
    L = k["n_layers"]
    measured_seq = L * (k["t_qkv"] + np.asarray(k["t_attn"]) + k["t_rest"]) + k["t_head"]
    b.plot(kc, measured_seq * 1e3, "kx", label="sequential from measured kernels")
    b.plot([meas["context"]], [meas["sequential_s"] * 1e3], "ko", mfc="none", label="sequential measured")
    best = max(meas["by_hit_rate"], key=lambda r: r["hit_rate"])
    b.plot(
        [meas["context"]],
        [best["alspec_s"] * 1e3],
        "o",
        color="C0",
        mfc="none",
        label=f"ALSpec measured (hit {best['hit_rate']:.1f})",
    )
    b.set_xscale("log")
    b.set_yscale("log")
    b.set_xlabel("context length (tokens)")
    b.set_ylabel("decode latency per token (ms)")
    b.set_title("cost model fed with measured kernel times")
    b.legend(fontsize=7)
    save_figure(fig, path)


def quality_rows(docs: list[dict], lams) -> list[dict]:
    """The data of the quality figure, tidy: one row per task and λ with ALSpec's quality and hit rate beside
    the exact and static modes' quality (the figure's horizontal lines)."""
    rows = []
    for doc in docs:
        key = "perplexity" if doc["kind"] == "perplexity" else "accuracy"
        modes = doc["modes"]
        for lam in lams:
            m = modes[f"alspec_{lam:.2f}"]
            rows.append(
                {
                    "task": doc["task"],
                    "lam": float(lam),
                    "metric": key,
                    "alspec": m[key],
                    "exact": modes["exact"][key],
                    "static": modes["static"][key],
                    "hit_rate": m["hit_rate"],
                    "approx_fraction": m["approx_fraction"],
                }
            )
    return rows


def write_rows(rows: list[dict], out_csv) -> None:
    with atomic_path(out_csv) as tmp, open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def write_figures(
    task_files, lm_file, timing_file, lams, extrapolate_to: int, quality_png, timing_png, quality_csv=None
) -> None:
    """The alspec_figures step: both figures, and the quality figure's data as CSV (`quality_rows`)."""
    tasks = [read_json(f) for f in task_files] + [read_json(lm_file)]
    plot_quality(tasks, lams, quality_png)
    if quality_csv is not None:
        write_rows(quality_rows(tasks, lams), quality_csv)
    plot_timing(read_json(timing_file), extrapolate_to, timing_png)
