"""Figures: hypotheses fan on a real series, toy heads vs the optimal quantizer, distortion vs K, the
authors' toy; the DAG steps that draw them (`*_for`, `sweep_table`), and the data of the main figure
(distortion vs K, claims.yaml's main_figure) as CSV."""

from __future__ import annotations

import numpy as np
import pandas as pd

from methods.common.io import atomic_path, read_json, write_json
from methods.common.plotting import new_figure, save_figure

from .data import load_windows
from .evaluate import predict
from .train import load_group


def _np(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def _one_dim(x: np.ndarray, dim: int, series_axis: int) -> np.ndarray:
    """Pick dimension `dim` when x still carries a series axis."""
    return np.take(x, dim, axis=series_axis) if x.ndim > series_axis else x


def plot_fan(context, target, hyps, weights, path, title: str, dim: int = 0) -> None:
    """Context, truth and the K hypotheses of one window (paper Fig. 3 style); line width and alpha grow with the score.

    context (C,) or (C, D), target (H,) or (H, D), hyps (K, H) or (K, H, D), weights (K,).
    """
    ctx, tgt = _one_dim(_np(context), dim, 1), _one_dim(_np(target), dim, 1)
    hyp, w = _one_dim(_np(hyps), dim, 2), _np(weights)
    C, H = len(ctx), len(tgt)
    rel = w / w.max() if w.max() > 0 else np.ones_like(w)
    fig, ax = new_figure(width=7.0, height=3.6)
    ax.plot(np.arange(C), ctx, color="black", lw=1.2, label="context")
    ax.plot(np.arange(C, C + H), tgt, color="black", lw=1.2, ls="--", label="truth")
    future = np.arange(C - 1, C + H)
    for k in np.argsort(rel):  # strongest drawn last, on top
        ax.plot(
            future,
            np.r_[ctx[-1], hyp[k]],
            color="tab:red",
            lw=0.6 + 2.4 * rel[k],
            alpha=0.15 + 0.85 * rel[k],
            label="hypotheses (width ~ score)" if k == np.argmax(rel) else None,
        )
    ax.axvline(C - 0.5, color="grey", lw=0.8)
    ax.set_xlabel("time step")
    ax.set_title(title)
    ax.legend(loc="best")
    save_figure(fig, path)


def plot_toy_heads(t, past, heads, reference_quantizer, path, title: str) -> None:
    """Learned heads vs the optimal quantizer on a toy process (paper Fig. 2 style).

    t: the full grid (n_steps,); past: the observed first P values; heads (K, H) and
    reference_quantizer (K', H) or None live on the last H grid points.
    """
    t, past, heads = _np(t), _np(past).reshape(-1), _np(heads)
    H = heads.shape[1]
    t_fut = np.r_[t[len(past) - 1], t[-H:]]
    fig, ax = new_figure(width=6.0, height=3.8)
    ax.plot(t[: len(past)], past, color="black", lw=1.5, label="observed past")
    if reference_quantizer is not None:
        for i, c in enumerate(_np(reference_quantizer)):
            ax.plot(
                t_fut,
                np.r_[past[-1], c],
                color="tab:brown",
                lw=2.5,
                alpha=0.6,
                label="optimal quantizer" if i == 0 else None,
            )
    for i, c in enumerate(heads):
        ax.plot(t_fut, np.r_[past[-1], c], color="tab:red", lw=1.2, ls="--", label="TimeMCL heads" if i == 0 else None)
    ax.axvspan(t_fut[0], t[-1], color="gold", alpha=0.08)
    ax.set_xlabel("t")
    ax.set_title(title)
    ax.legend(loc="best")
    save_figure(fig, path)


def plot_distortion_vs_k(table: list[dict], path) -> None:
    """Distortion (mean +- std over seeds) against the number of hypotheses K, one line per method."""
    fig, ax = new_figure(width=5.5, height=3.8)
    for method in sorted({row["method"] for row in table}):
        rows = sorted((r for r in table if r["method"] == method), key=lambda r: r["K"])
        ks = [r["K"] for r in rows]
        ax.errorbar(
            ks,
            [r["distortion_mean"] for r in rows],
            yerr=[r.get("distortion_std", 0.0) or 0.0 for r in rows],
            marker="o",
            capsize=3,
            label=method,
        )
    ax.set_xscale("log", base=2)
    ks_all = sorted({r["K"] for r in table})
    ax.set_xticks(ks_all, [str(k) for k in ks_all])
    ax.set_xlabel("number of hypotheses K")
    ax.set_ylabel("distortion (lower is better)")
    ax.legend(loc="best")
    save_figure(fig, path)


def plot_official_toy(doc: dict, path) -> None:
    """The authors' toy: heads at one x0 against the k-means quantizer (left), scores against cell masses (right)."""
    fig, (ax, bx) = new_figure(ncols=2, width=10.0, height=3.8)
    x0, heads, centres = doc["example_x0"], _np(doc["example_heads"]), _np(doc["quantizer_centres"])
    s = np.arange(heads.shape[1])
    for i, c in enumerate(centres):
        ax.plot(s, x0 + c, color="tab:brown", lw=2.5, alpha=0.6, label="k-means quantizer" if i == 0 else None)
    for i, h in enumerate(heads):
        ax.plot(s, h, color="tab:red", lw=1.2, ls="--", label="TimeMCL heads" if i == 0 else None)
    ax.set_xlabel("step in the window")
    ax.set_title(f"heads at x0 = {x0:.2f} (seed {doc['seed']}), distortion ratio {doc['distortion_ratio']:.3f}")
    ax.legend(loc="best")
    scores, masses = _np(doc["scores"]).ravel(), _np(doc["masses"]).ravel()
    bx.scatter(masses, scores, s=8, alpha=0.6)
    top = max(scores.max(), masses.max()) * 1.05
    bx.plot([0, top], [0, top], color="grey", lw=1)
    bx.set_xlabel("Voronoi-cell mass (sampled)")
    bx.set_ylabel("score head (sigmoid)")
    bx.set_title(f"Prop. 5.2: mean max gap {doc['score_mass_gap_mean']:.3f}")
    save_figure(fig, path)


# --- the DAG steps that draw -------------------------------------------------------------------


def plot_fan_for(series_csv: str, spec: dict, ckpt: str, out_png: str, title: str) -> None:
    """Step timemcl_fan_figure: fan plot of the group checkpoint's first seed on the test window where the
    hypotheses spread the most (first dimension)."""
    ctx, tgt = load_windows(series_csv, spec)["test"]
    _, model = next(iter(load_group(ckpt).values()))
    hyps, weights = predict("timemcl", model, ctx)
    i = int(np.argmax(hyps[:, :, :, 0].std(axis=1).mean(axis=1)))
    plot_fan(ctx[i], tgt[i], hyps[i], weights[i], out_png, title=title)


def plot_toy_for(npz_path: str, variant: str, out_png: str, title: str) -> None:
    """Step timemcl_toy_figure: the heads saved by the toy step (its group's first seed)."""
    z = np.load(npz_path)
    plot_toy_heads(z["t"], z["past"], z[f"heads_{variant}"], z["reference"], out_png, title=title)


def plot_official_toy_for(official_json: str, out_png: str) -> None:
    """Step timemcl_official_toy_figure: the authors' toy, first seed."""
    plot_official_toy(read_json(official_json)["seeds"][0], out_png)


def sweep_rows(metrics_files: list[str], variant: str) -> list[dict]:
    """Distortion vs K of the primary variant and DeepAR, one row per (method, K) with its per-seed values
    (seed order), mean and std over seeds; metrics_files are the evaluate step's seed-group files."""
    rows = {}
    docs = sorted((d for f in metrics_files for d in read_json(f)["evaluations"]), key=lambda d: (d["K"], d["seed"]))
    for doc in docs:
        for method in (variant, "deepar"):
            rows.setdefault((method, doc["K"]), []).append(doc["methods"][method]["distortion"])
    return [
        {
            "method": "TimeMCL" if m == variant else "DeepAR (K samples)",
            "key": m,
            "K": k,
            "values": v,
            "distortion_mean": float(np.mean(v)),
            "distortion_std": float(np.std(v, ddof=1)) if len(v) > 1 else 0.0,
        }
        for (m, k), v in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1]))
    ]


def sweep_table(metrics_files: list[str], variant: str, out_png: str, out_json: str, out_csv: str) -> None:
    """Step timemcl_sweep_figure: the distortion-vs-K figure, its table (read by the claims step) and its data
    as CSV (method, K, distortion mean and std over seeds)."""
    table = sweep_rows(metrics_files, variant)
    plot_distortion_vs_k(table, out_png)
    write_json(out_json, {"variant": variant, "table": table})
    frame = pd.DataFrame([{k: r[k] for k in ("method", "K", "distortion_mean", "distortion_std")} for r in table])
    with atomic_path(out_csv) as tmp:
        frame.to_csv(tmp, index=False)
