"""The figures of the NestQuant DAG (rules nestquant_synthetic_figure, nestquant_quality_figure) and the data
file of the main figure (figures/synthetic.csv: error vs bits per entry of every quantizer, distribution and
seed, for `dvc plots`)."""

from __future__ import annotations

import csv

import numpy as np

from methods.common.io import atomic_path, read_json
from methods.common.plotting import new_figure, save_figure

from .evaluate import FP, METHODS
from .quant import nestquant_rate
from .synthetic import E8_GAIN_DB, gains_db


def synthetic_rows(runs: list[dict]) -> list[dict]:
    """The error-vs-rate curves of every run (seed), tidy: one row per quantizer setting."""
    rows = []
    for run in runs:
        for dist, curves in run["results"].items():
            for name, curve in curves.items():
                for p in curve:
                    rows.append(
                        {
                            "distribution": dist,
                            "quantizer": name,
                            "seed": run["seed"],
                            "rate": p["rate"],
                            "mse": p["mse"],
                            "matmul": p["matmul"],
                        }
                    )
    return rows


def write_rows(rows: list[dict], out_csv: str) -> None:
    with atomic_path(out_csv) as tmp, open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def synthetic_figure(files: list[str], claim_q: int, out_png: str, out_csv: str | None = None) -> None:
    """MSE vs rate per distribution (first seed), and NestQuant's gain in dB over uniform quantization with
    optimal clipping vs rate (MSE and matrix-product error), with the E8 granular gain as a reference line;
    `out_csv`: every seed's error-vs-rate curves as a table (`synthetic_rows`)."""
    runs = [read_json(f) for f in files]
    if out_csv is not None:
        write_rows(synthetic_rows(runs), out_csv)
    dists = list(runs[0]["results"])
    fig, axes = new_figure(1, len(dists) + 1, width=5 * (len(dists) + 1), height=4)
    for ax, dist in zip(axes, dists):
        for name, curve in runs[0]["results"][dist].items():
            ax.semilogy([p["rate"] for p in curve], [p["mse"] for p in curve], "o-", label=name)
        ax.axvline(nestquant_rate(claim_q, 4, runs[0]["cols"]), color="0.6", ls=":", lw=0.8)
        ax.set_title(f"{dist}: relative MSE (seed {runs[0]['seed']})")
        ax.set_xlabel("bits per entry")
        ax.legend(fontsize=7)
    ax = axes[-1]
    for i, dist in enumerate(dists):
        qs = [p["q"] for p in runs[0]["results"][dist]["nestquant"]]
        rates = [p["rate"] for p in runs[0]["results"][dist]["nestquant"]]
        for key, style in (("mse", "o-"), ("matmul", "s:")):
            gains = np.array([[gains_db(r["results"][dist], q, key)["uniform_clipped"] for q in qs] for r in runs])
            ax.plot(rates, gains.mean(0), style, color=f"C{i}", label=f"{dist}, {key} (mean of {len(runs)} seeds)")
    ax.axhline(E8_GAIN_DB, color="k", ls="--", lw=1, label=f"E8 granular gain {E8_GAIN_DB:.2f} dB")
    ax.axhline(0, color="0.5", lw=0.6)
    ax.set_title("NestQuant gain over uniform w/ optimal clipping")
    ax.set_xlabel("bits per entry")
    ax.set_ylabel("dB")
    ax.legend(fontsize=7)
    save_figure(fig, out_png)


def quality_figure(lm_files: list[str], minilm_files: list[str], settings: list[str], out_png: str) -> None:
    """Causal-LM perplexity per method and setting (a log axis where the methods span more than a factor of 10),
    MiniLM fidelity per method (bars: mean, dots: seeds)."""
    lm = [read_json(f) for f in lm_files]
    mini = [read_json(f)["results"] for f in minilm_files]
    fig, axes = new_figure(1, len(settings) + 1, width=4.5 * (len(settings) + 1), height=3.8)
    x = np.arange(len(METHODS))
    for ax, setting in zip(axes, settings):
        vals = np.array([[r["results"][setting][m]["perplexity"] for m in METHODS] for r in lm])
        ax.bar(x, vals.mean(0), color="C0")
        for v in vals:
            ax.plot(x, v, "k.", ms=4)
        ax.axhline(np.mean([r["results"][FP]["perplexity"] for r in lm]), color="C3", ls="--", label="fp")
        low = min(vals.min(), lm[0]["results"][FP]["perplexity"])
        if vals.max() > 10 * low:
            ax.set_yscale("log")
        ax.set_ylim(0.9 * low, 1.05 * vals.max())
        ax.set_xticks(x, METHODS, rotation=30, ha="right")
        ax.set_title(f"causal LM {setting.upper()} test perplexity")
        ax.legend(fontsize=7)
    vals = np.array([[r[m]["fidelity"] for m in METHODS] for r in mini])
    axes[-1].bar(x, vals.mean(0), color="C2")
    for v in vals:
        axes[-1].plot(x, v, "k.", ms=4)
    axes[-1].set_ylim(max(0.0, vals.min() - 0.05), 1.0)
    axes[-1].set_xticks(x, METHODS, rotation=30, ha="right")
    axes[-1].set_title("MiniLM W4 embedding cosine to fp")
    save_figure(fig, out_png)
