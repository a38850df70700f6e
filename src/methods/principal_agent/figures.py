"""Figures: regret vs T per adversary, vs N and K, the smooth model, the lower-bound instances, the lower-bound
families for known responses (T; K and N) and the zooming learner for smooth general incentives."""

from __future__ import annotations

import csv

import numpy as np

from methods.common.io import atomic_path, read_json
from methods.common.plotting import new_figure, save_figure

from .summary import merge_runs

LABELS = {
    "exp3_linear": "Exp3-linear on merged candidates (paper)",
    "exp3_candidates": "EXP3 on raw candidates (K N + 1)",
    "exp3_merged": "EXP3 on merged candidates",
    "naive_grid": "EXP3 on a naive uniform grid",
    "uniform": "uniform play (null)",
    "never_pay": "never paying (null)",
    "lipschitz": "Tsallis-INF on the eps-grid",
}


def _fmt(v) -> str:
    """A slope for a legend; JSON null (NaN) as 'nan'."""
    return "nan" if v is None or not np.isfinite(v) else f"{v:.2f}"


def _curve(ax, c, label, **kw):
    x, m, s = np.array(c["x"]), np.array(c["mean"]), np.array(c["std"])
    text = f"{label}  (slope {_fmt(c['slope'])} [{_fmt(c['lo'])}, {_fmt(c['hi'])}])"
    ax.errorbar(x, m, yerr=s, marker="o", ms=3, capsize=2, label=text, **kw)


def _reference(ax, x, y0, exponent, label):
    x = np.asarray(x, float)
    ax.plot(x, y0 * (x / x[0]) ** exponent, color="grey", ls=":", lw=1, label=label)


def plot_rates(rate: dict, path) -> None:
    """Regret vs T of Exp3-linear and the naive grid, one panel per adversary, with the explicit bound."""
    advs = list(rate)
    fig, axes = new_figure(1, len(advs), width=3.8 * len(advs), height=4.8, squeeze=False)
    for ax, adv in zip(axes[0], advs):
        for alg, c in rate[adv].items():
            if alg != "bound":
                _curve(ax, c, LABELS.get(alg, alg))
        x = rate[adv]["exp3_linear"]["x"]
        ax.plot(x, rate[adv]["bound"], color="black", ls="--", lw=1, label="bound 2 sqrt(3 d T log k)")
        _reference(ax, x, rate[adv]["exp3_linear"]["mean"][0], 0.5, "T^(1/2)")
        ax.set(xscale="log", yscale="log", xlabel="T", ylabel="regret", title=f"adversary: {adv}")
        ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.18))
    save_figure(fig, path)


def plot_sweeps(sweep: dict, path) -> None:
    """Regret at the sweep horizon vs N and vs K, with the exponent each bound predicts."""
    fig, axes = new_figure(1, 2, width=9.0, height=5.0, squeeze=False)
    for ax, (dim, name) in zip(axes[0], [("arms", "N"), ("types", "K")]):
        if dim not in sweep:
            continue
        for alg, c in sweep[dim].items():
            if alg != "T":
                _curve(
                    ax,
                    c,
                    f"{LABELS.get(alg, alg)}, bound exp. {_fmt(c['theory'])}"
                    if "theory" in c
                    else LABELS.get(alg, alg),
                )
        ax.set(
            xscale="log",
            yscale="log",
            xlabel=name,
            ylabel=f"regret at T = {sweep[dim]['T']}",
            title=f"regret vs {name}",
        )
        ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.18))
    save_figure(fig, path)


def plot_lipschitz(lip: dict, path) -> None:
    """Smooth model: regret vs T on logit agents and on the needle family, with the explicit bound."""
    fig, axes = new_figure(1, len(lip), width=4.5 * len(lip), height=3.6, squeeze=False)
    for ax, (inst, c) in zip(axes[0], lip.items()):
        _curve(ax, c, LABELS["lipschitz"])
        ax.plot(c["x"], c["bound"], color="black", ls="--", lw=1, label="bound 8 sqrt(nT) + 2 + (2L+1) eps T")
        _reference(ax, c["x"], c["mean"][0], 2 / 3, "T^(2/3)")
        if "uniform" in c:
            ax.plot(c["x"], c["uniform"], "x:", color="C7", label="uniform play (null)")
        ax.set(xscale="log", yscale="log", xlabel="T", ylabel="regret", title=f"smooth agents: {inst}")
        ax.legend(fontsize=6, loc="best")
    save_figure(fig, path)


def plot_lower_bound(lb: dict, multiarm: dict, path) -> None:
    """Unknown responses (Theorem 2.1 instance): linear regret; and the multi-arm extension's regret."""
    fig, axes = new_figure(1, 2, width=9.0, height=3.6, squeeze=False)
    ax = axes[0][0]
    for alg, c in lb.items():
        _curve(ax, c, LABELS.get(alg, alg) + (" (knows responses)" if alg == "exp3_linear" else ""))
    first = next(iter(lb.values()))
    _reference(ax, first["x"], first["mean"][0], 1.0, "T^1")
    ax.set(xscale="log", yscale="log", xlabel="T", ylabel="regret", title="lower-bound instance (K=2, N=3)")
    ax.legend(fontsize=6)
    ax = axes[0][1]
    _curve(ax, multiarm, "Exp3-linear on polytope vertices")
    _reference(ax, multiarm["x"], multiarm["mean"][0], 0.5, "T^(1/2)")
    if "uniform" in multiarm:
        ax.plot(multiarm["x"], multiarm["uniform"], "x:", color="C7", label="uniform play (null)")
    ax.set(xscale="log", yscale="log", xlabel="T", ylabel="regret", title="general (multi-arm) incentives")
    ax.legend(fontsize=6)
    save_figure(fig, path)


def plot_two_point(docs: list[dict], path) -> None:
    """Pseudo-regret on the two-point family against T (one line per learner and seed), uniform play, sqrt(T)."""
    fig, ax = new_figure(width=6.4, height=4.2)
    T = np.array(docs[0]["horizons"], float)
    names = list(docs[0]["algorithms"]) + ["uniform"]
    for i, name in enumerate(names):
        for k, doc in enumerate(docs):
            r = doc["uniform"] if name == "uniform" else doc["algorithms"][name]
            ax.plot(
                T,
                r["regret"],
                "x:" if name == "uniform" else "o-",
                color=f"C{i}",
                alpha=0.8,
                label=(LABELS.get(name, "uniform play (null)")) if k == 0 else None,
            )
    first = min(d["algorithms"][n]["regret"][0] for d in docs for n in d["algorithms"])
    ax.plot(T, first * np.sqrt(T / T[0]), "k--", lw=1, label="sqrt(T) (the bound's rate)")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="horizon T",
        ylabel="pseudo-regret",
        title=f"known greedy responses: two-point family, eps = {docs[0]['c']}/sqrt(T)",
    )
    ax.legend(fontsize=7)
    save_figure(fig, path)


def plot_hidden_subset(docs: list[dict], path) -> None:
    """Regret on the hidden-subset family against min{sqrt(K T log N), K sqrt(T)} over the K x N grid."""
    fig, (ax1, ax2) = new_figure(1, 2, width=10.5, height=4.0)
    types = docs[0]["types"]
    markers = "os^vD<>p"
    for d, doc in enumerate(docs):
        for r in doc["rows"]:
            ki, ni = types.index(r["K"]), doc["arms"].index(r["N"])
            ax1.plot(
                r["bound"],
                r["regret"],
                markers[ni % len(markers)],
                color=f"C{ki}",
                alpha=0.8,
                label=f"K={r['K']}, N={r['N']}" if d == 0 else None,
            )
            ax1.plot(
                r["bound"],
                r["regret_uniform"],
                "x",
                color="C7",
                alpha=0.6,
                label="uniform play (null)" if d == 0 and r is doc["rows"][0] else None,
            )
    b = np.array([r["bound"] for doc in docs for r in doc["rows"]])
    ratio = np.array([r["ratio"] for doc in docs for r in doc["rows"]])
    xs = np.array([b.min(), b.max()])
    ax1.plot(xs, np.median(ratio) * xs, "k--", lw=1, label=f"c * bound, c = {np.median(ratio):.3f} (median)")
    ax1.set(
        xscale="log",
        yscale="log",
        xlabel="min{sqrt(K T log N), K sqrt(T)}",
        ylabel="pseudo-regret",
        title=f"hidden-subset family, T = {docs[0]['horizon']}, Exp3-linear",
    )
    ax1.legend(fontsize=6, ncol=2)
    for ki, K in enumerate(types):
        for d, doc in enumerate(docs):
            rows = [r for r in doc["rows"] if r["K"] == K]
            ax2.plot(
                [r["N"] for r in rows],
                [r["ratio"] for r in rows],
                "o-",
                color=f"C{ki}",
                alpha=0.8,
                label=f"K={K}" if d == 0 else None,
            )
    ax2.set(xscale="log", xlabel="arms N", ylabel="regret / bound", title="ratio to the bound (one line per seed)")
    ax2.set_ylim(bottom=0)
    ax2.legend(fontsize=8)
    save_figure(fig, path)


def plot_zooming(docs: list[dict], path) -> None:
    """Regret of the zooming learner, the T-tuned uniform grid and uniform play against T, with T^{(N+1)/(N+2)}."""
    fig, (ax1, ax2) = new_figure(1, 2, width=10.5, height=4.0)
    T = np.array(docs[0]["horizons"], float)
    for i, name in enumerate(docs[0]["learners"]):
        for d, doc in enumerate(docs):
            r = doc["learners"][name]
            ax1.plot(T, r["regret"], "o-", color=f"C{i}", alpha=0.8, label=name if d == 0 else None)
            if name != "uniform_play":
                ax2.plot(T, r["n_cells"], "o-", color=f"C{i}", alpha=0.8, label=name if d == 0 else None)
    rate = docs[0]["rate_exponent"]
    first = min(d["learners"]["zooming"]["regret"][0] for d in docs)
    ax1.plot(T, first * (T / T[0]) ** rate, "k--", lw=1, label=f"T^{rate:.2f} (the row's rate)")
    ax1.set(
        xscale="log",
        yscale="log",
        xlabel="horizon T",
        ylabel="regret vs best fixed incentive",
        title=f"smooth, general incentives (N={docs[0]['n_arms']}, L={docs[0]['lipschitz']:g}), adaptive adversary",
    )
    ax2.set(xscale="log", yscale="log", xlabel="horizon T", ylabel="active cells", title="partition size")
    ax1.legend(fontsize=8)
    ax2.legend(fontsize=8)
    save_figure(fig, path)


def rate_rows(rate: dict) -> list[dict]:
    """The data of the regret-vs-T figure (the paper's main rate): per T, the seed-mean regret of every
    algorithm under every adversary (`<algorithm>_<adversary>`) and the explicit bound (`bound_<adversary>`)."""
    rows: dict[float, dict] = {}
    for adv, curves in rate.items():
        for alg, c in curves.items():
            if alg == "bound":
                continue
            for T, v in zip(c["x"], c["mean"]):
                rows.setdefault(T, {"T": T})[f"{alg}_{adv}"] = v
        for T, b in zip(curves["exp3_linear"]["x"], curves["bound"]):
            rows[T][f"bound_{adv}"] = b
    return [rows[T] for T in sorted(rows)]


def _write_csv(path: str, rows: list[dict]) -> None:
    """A tidy CSV (one row per point, the columns of the first row), written atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def make_figures(
    summary_json: str,
    two_point_files: list[str],
    hidden_subset_files: list[str],
    zooming_files: list[str],
    rate_png: str,
    rate_csv: str,
    sweep_png: str,
    lipschitz_png: str,
    lower_bound_png: str,
    two_point_png: str,
    hidden_subset_png: str,
    zooming_png: str,
) -> None:
    """Step principal_agent_figures: every figure from summary.json and the lower-bound / zooming seed groups."""
    curves = read_json(summary_json)["curves"]
    plot_rates(curves["rate"], rate_png)
    _write_csv(rate_csv, rate_rows(curves["rate"]))
    plot_sweeps(curves["sweep"], sweep_png)
    plot_lipschitz(curves["lipschitz"], lipschitz_png)
    plot_lower_bound(curves["lower_bound"], curves["multiarm"], lower_bound_png)
    plot_two_point(merge_runs(two_point_files), two_point_png)
    plot_hidden_subset(merge_runs(hidden_subset_files), hidden_subset_png)
    plot_zooming(merge_runs(zooming_files), zooming_png)
