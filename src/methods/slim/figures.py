"""The figures of the SLiM DAG (rules slim_ladder_figure, slim_speed_figure) and the data file of the main
figure (figures/ladder.csv: the quality ladder, one row per rung and calibration seed, for `dvc plots`)."""

from __future__ import annotations

import csv

import numpy as np

from methods.common.io import atomic_path, read_json
from methods.common.plotting import new_figure, save_figure

from .results import DENSE, load_runs, num


def ladder_rows(lm: list[dict], mini: list[dict], ladder: list[str]) -> list[dict]:
    """The data of the ladder figure, tidy: one row per rung (0 = dense) and calibration seed (the run's index);
    the dense rung's layer output error is 0."""
    rows = []
    for i, name in enumerate([DENSE] + ladder):
        for seed, (r_lm, r_mini) in enumerate(zip(lm, mini)):
            rows.append(
                {
                    "rung": i,
                    "recipe": name,
                    "seed_index": seed,
                    "lm_perplexity": num(r_lm[name]["perplexity"]),
                    "minilm_fidelity": num(r_mini[name]["fidelity"]),
                    "lm_output_error": num(r_lm[name].get("output_error", 0.0)),
                    "minilm_output_error": num(r_mini[name].get("output_error", 0.0)),
                }
            )
    return rows


def write_rows(rows: list[dict], out_csv: str) -> None:
    with atomic_path(out_csv) as tmp, open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def ladder_figure(
    lm_files: list[str], minilm_files: list[str], ladder: list[str], out_png: str, out_csv: str | None = None
) -> None:
    """Perplexity and MiniLM fidelity along the ladder (mean and per seed), plus the mean layer output error;
    `out_csv`: the same numbers as a table (`ladder_rows`)."""
    lm, mini = load_runs(lm_files), load_runs(minilm_files)
    if out_csv is not None:
        write_rows(ladder_rows(lm, mini, ladder), out_csv)
    fig, axes = new_figure(1, 3, width=13, height=3.8)
    rungs = [DENSE] + ladder
    x = np.arange(len(rungs))
    for ax, runs, key, label in (
        (axes[0], lm, "perplexity", "causal LM test perplexity"),
        (axes[1], mini, "fidelity", "MiniLM embedding cosine to dense"),
    ):
        vals = np.array([[r[n][key] for n in rungs] for r in runs])
        for v in vals:
            ax.plot(x, v, color="0.7", lw=0.8)
        ax.plot(x, vals.mean(0), "o-", color="C0")
        ax.set_title(label)
        ax.set_xticks(x, rungs, rotation=35, ha="right")
    for runs, name, color in ((lm, "causal LM", "C1"), (mini, "MiniLM", "C2")):
        vals = np.array([[r[n]["output_error"] for n in ladder] for r in runs])
        axes[2].semilogy(x[1:], vals.mean(0), "o-", color=color, label=name)
    axes[2].set_xticks(x[1:], ladder, rotation=35, ha="right")
    axes[2].set_title("mean layer output error (held-out)")
    axes[2].legend()
    save_figure(fig, out_png)


def speed_figure(speed_json: str, out_png: str) -> None:
    """Speedup over dense fp32 per layer shape and batch, and decode tokens/s per format."""
    s = read_json(speed_json)
    fig, axes = new_figure(1, 2, width=11, height=3.8)
    formats = [f for f in s["layers"][0]["seconds"] if f != "dense_fp32"]
    labels = [f"{e['n']}x{e['k']}\nM={e['m']}" for e in s["layers"]]
    x = np.arange(len(labels))
    width = 0.8 / len(formats)
    for i, f in enumerate(formats):
        ratio = [e["seconds"]["dense_fp32"] / e["seconds"][f] for e in s["layers"]]
        axes[0].bar(x + i * width, ratio, width, label=f)
    axes[0].axhline(1, color="k", lw=0.8)
    axes[0].set_yscale("log")
    axes[0].set_xticks(x + 0.4 - width / 2, labels, fontsize=7)
    device = s.get("device", "cpu")
    axes[0].set_title(f"speedup over dense fp32 ({device}, {s['threads']} threads)")
    axes[0].legend(fontsize=7)
    by_batch = s.get("decode_tokens_per_s_by_batch") or {"1": s["decode_tokens_per_s"]}
    fmts = list(next(iter(by_batch.values())))
    x = np.arange(len(fmts))
    width = 0.8 / len(by_batch)
    for i, (b, tps) in enumerate(by_batch.items()):
        axes[1].bar(x + i * width, [tps[f] for f in fmts], width, label=f"batch {b}")
    axes[1].set_xticks(x + 0.4 - width / 2, fmts, fontsize=7, rotation=20)
    axes[1].set_yscale("log")
    axes[1].legend(fontsize=7)
    axes[1].set_title(f"causal LM greedy decode, tokens/s ({device})")
    save_figure(fig, out_png)
