"""Figures: regret vs T per adversary, vs N and K, the smooth model, the lower-bound instance."""
from __future__ import annotations

import numpy as np

from methods.common.plotting import new_figure, save_figure

LABELS = {
    "exp3_linear": "Exp3-linear on merged candidates (paper)",
    "exp3_candidates": "EXP3 on raw candidates (K N + 1)",
    "exp3_merged": "EXP3 on merged candidates",
    "naive_grid": "EXP3 on a naive uniform grid",
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
                _curve(ax, c, f"{LABELS.get(alg, alg)}, bound exp. {_fmt(c['theory'])}")
        ax.set(xscale="log", yscale="log", xlabel=name, ylabel=f"regret at T = {sweep[dim]['T']}",
               title=f"regret vs {name}")
        ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.18))
    save_figure(fig, path)


def plot_lipschitz(lip: dict, path) -> None:
    """Smooth model: regret vs T on logit agents and on the needle family, with the explicit bound."""
    fig, axes = new_figure(1, len(lip), width=4.5 * len(lip), height=3.6, squeeze=False)
    for ax, (inst, c) in zip(axes[0], lip.items()):
        _curve(ax, c, LABELS["lipschitz"])
        ax.plot(c["x"], c["bound"], color="black", ls="--", lw=1, label="bound 8 sqrt(nT) + 2 + (2L+1) eps T")
        _reference(ax, c["x"], c["mean"][0], 2 / 3, "T^(2/3)")
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
    ax.set(xscale="log", yscale="log", xlabel="T", ylabel="regret", title="general (multi-arm) incentives")
    ax.legend(fontsize=6)
    save_figure(fig, path)
