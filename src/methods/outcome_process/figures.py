"""Figures of the outcome_process experiments (project style: methods.common.plotting)."""

from __future__ import annotations

import csv

import numpy as np

from methods.common.io import atomic_path, read_json
from methods.common.plotting import new_figure, save_figure

from .experiments import loglog_slope
from .summary import horizon_curves, merge_seed_groups, merged_by, sample_complexity

COLORS = {"outcome": "C0", "process": "C1", "oracle": "C2", "naive": "C3"}
LABELS = {
    "outcome": "outcome (reduction)",
    "process": "process (step labels)",
    "oracle": "oracle (true step rewards)",
    "naive": "best observed trajectory",
}


def _mean_se(a: np.ndarray, axis: int):
    a = np.asarray(a, float)
    se = a.std(axis=axis, ddof=1) / np.sqrt(a.shape[axis]) if a.shape[axis] > 1 else np.zeros(a.mean(axis).shape)
    return a.mean(axis), se


def plot_rate(docs: list[dict], out_png: str) -> None:
    """Sub-optimality vs number of trajectories, one panel per MDP family, with fitted log-log slopes."""
    fig, axes = new_figure(1, len(docs), width=4.0 * len(docs), height=3.4, squeeze=False)
    for ax, doc in zip(axes[0], docs):
        n = np.asarray(doc["n_trajectories"])
        for m in [k for k in ("process", "outcome", "oracle", "naive") if k in doc["subopt"]]:
            mean, se = _mean_se(doc["subopt"][m], axis=0)
            ax.plot(n, mean, "o-", color=COLORS[m], label=f"{LABELS[m]}: slope {loglog_slope(n, mean):.2f}")
            ax.fill_between(n, np.maximum(mean - se, 1e-4), mean + se, color=COLORS[m], alpha=0.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("trajectories n")
        ax.set_ylabel("sub-optimality V* - V(learned)")
        ax.set_title(f"{doc['family']} (H={doc['spec']['horizon']}, {len(doc['seeds'])} seeds)")
        ax.legend(fontsize=7)
    save_figure(fig, out_png)


def plot_coverage(horizon_doc: dict, eps_doc: dict, samples_doc: dict, needed: dict, out_png: str) -> None:
    """(a) horizon sweep: error vs C_traj at fixed C_sa and n; (b) eps sweep: error vs C_sa;
    (c) trajectories needed to reach the per-step target vs C_traj (open markers: not reached)."""
    fig, (a, b, c) = new_figure(1, 3, width=13.0, height=3.8)
    for ax, doc, key, xlabel in (
        (a, horizon_doc, "c_traj", "trajectory coverage C_traj (horizon sweep)"),
        (b, eps_doc, "c_sa", "state-action coverage C_sa (eps sweep)"),
    ):
        x = np.asarray(doc["coverage"][key]).max(1)
        for m in ("outcome", "process", "oracle", "naive"):
            mean, se = _mean_se(doc["subopt"][m], axis=1)
            ax.errorbar(x, np.maximum(mean, 1e-4), yerr=se, fmt="o-", color=COLORS[m], label=LABELS[m], capsize=2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"sub-optimality at n={doc['n_trajectories']}")
    c_sa = np.asarray(horizon_doc["coverage"]["c_sa"]).max()
    horizons = [p["horizon"] for p in horizon_doc["points"]]
    a.set_title(f"H = {min(horizons)}..{max(horizons)}: C_sa fixed at {c_sa:.3g}, C_traj = A^H", fontsize=8)
    eps = ", ".join(str(p["eps"]) for p in eps_doc["points"])
    b.set_title(f"H={eps_doc['points'][0]['horizon']}, mu = (1-eps) worst + eps uniform, eps = {eps}", fontsize=8)
    a.legend(fontsize=7)
    x = np.asarray(needed["c_traj"])
    for m in ("outcome", "process", "oracle", "naive"):
        y = np.asarray(needed["needed"][m])
        ok = np.isfinite(y)
        c.plot(x[ok], y[ok], "o-", color=COLORS[m], label=LABELS[m])
        c.plot(x[~ok], np.full((~ok).sum(), needed["n_max"]), "o", mfc="none", color=COLORS[m])
    c.plot(
        x,
        x * needed["needed"]["naive"][0] / x[0] if np.isfinite(needed["needed"]["naive"][0]) else x,
        "k:",
        lw=0.8,
        label="n proportional to C_traj",
    )
    c.set_xscale("log")
    c.set_yscale("log")
    c.set_xlabel("trajectory coverage C_traj (horizon sweep)")
    c.set_ylabel(f"trajectories to reach subopt/H <= {needed['target_per_step']}")
    c.set_title("sample complexity (open: beyond the grid)", fontsize=8)
    c.legend(fontsize=6)
    save_figure(fig, out_png)


def plot_lemma(doc: dict, out_png: str) -> None:
    """(a) C_sa, kappa and C_traj of pi* along the horizon sweep; (b) kappa/C_sa against C_traj/C_sa."""
    rows = doc["rows"]
    fig, (a, b) = new_figure(1, 2, width=9.0, height=3.6)
    hs = sorted(
        (r for r in rows if r["mdp"].startswith("horizon:") and r["policy"] == "optimal"), key=lambda r: r["horizon"]
    )
    H = [r["horizon"] for r in hs]
    for key, label, style in (
        ("c_sa", "C_sa(pi*, mu)", "s-"),
        ("kappa", "change-of-measure ratio kappa", "o-"),
        ("c_traj", "C_traj(pi*, mu)", "^-"),
    ):
        a.plot(H, [r[key] for r in hs], style, label=label)
    a.plot(H, [h**3 * r["c_sa"] for h, r in zip(H, hs)], "k--", lw=0.8, label="H^3 C_sa")
    a.set_yscale("log")
    a.set_xlabel("horizon H (chain, uniform mu)")
    a.legend(fontsize=7, loc="upper left")
    x = np.array([r["c_traj"] / r["c_sa"] for r in rows])
    y = np.array([r["kappa"] / r["c_sa"] for r in rows])
    b.scatter(x, y, s=10)
    grid = np.logspace(0, np.log10(max(x.max(), 10)), 50)
    b.plot(grid, grid, "k:", lw=0.8, label="kappa = C_traj (trivial bound)")
    b.set_xscale("log")
    b.set_yscale("log")
    b.set_xlabel("C_traj / C_sa")
    b.set_ylabel("kappa / C_sa")
    b.set_title(f"{len(rows)} (MDP, policy) pairs")
    b.legend(fontsize=7)
    save_figure(fig, out_png)


def plot_prm(doc: dict, out_png: str) -> None:
    """(a) sub-optimality of mu and of policies learned from each process reward; (b) with rollout estimates."""
    fams = list(doc["families"])
    fig, (a, b) = new_figure(1, 2, width=9.0, height=3.6)
    kinds = [
        ("mu", "behaviour mu"),
        ("greedy", "greedy on Q^mu"),
        ("q_value", "RL with Q^mu reward"),
        ("advantage", "RL with A^mu reward"),
    ]
    w = 0.8 / len(kinds)
    for k, (key, label) in enumerate(kinds):
        means = [np.mean(doc["families"][f]["subopt"][key]) for f in fams]
        bars = a.bar(np.arange(len(fams)) + (k - 1.5) * w, means, w, label=label)
        a.bar_label(bars, fmt="%.2f", fontsize=5)
    a.set_xticks(np.arange(len(fams)))
    a.set_xticklabels(fams)
    a.set_ylabel("sub-optimality (mean over instances)")
    a.legend(fontsize=7)
    for f in fams:
        roll = doc["families"][f]["rollouts"]
        m = sorted(int(k) for k in roll)
        if not m:
            continue
        line = b.plot(m, [np.mean(roll[str(x)]["advantage"]) for x in m], "o-", label=f"{f}: A^mu")
        b.plot(m, [np.mean(roll[str(x)]["q_value"]) for x in m], "x--", color=line[0].get_color(), label=f"{f}: Q^mu")
    b.set_xscale("log")
    b.set_xlabel("rollouts per (h, s, a)")
    b.set_ylabel("sub-optimality")
    b.legend(fontsize=6, ncol=2)
    save_figure(fig, out_png)


def plot_horizon_gap(c: dict, out_png: str) -> None:
    """The outcome-to-process ratio along the horizon sweep against H, with H^{3/2}, the trajectory-level
    learner's ratio (the null) and C_traj, each scaled to the outcome ratio's first finite point."""
    fig, ax = new_figure(width=6.4, height=4.2)
    finite = np.isfinite(c["ratio"])
    r0 = c["ratio"][finite][0] if finite.any() else 1.0
    ax.plot(c["H"], c["ratio"], "o-", color=COLORS["outcome"], label="outcome / process sub-optimality (seed means)")
    ax.plot(c["H"], c["naive_ratio"], "s-", color=COLORS["naive"], label="best observed trajectory / process")
    ax.plot(c["H"], r0 * (c["H"] / c["H"][0]) ** 1.5, "k--", lw=1, label="H^{3/2} (assumed poly(H))")
    ax.plot(c["H"], r0 * c["c_traj"] / c["c_traj"][0], ":", color="C4", label="C_traj (trajectory coverage)")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="horizon H",
        ylabel="ratio (reference lines scaled at the first H)",
        title="the outcome-to-process constant against H (de Bruijn chain, fixed n)",
    )
    ax.legend(fontsize=8)
    save_figure(fig, out_png)


def plot_preference(rates: list[dict], prefs: list[dict], out_png: str) -> None:
    """Sub-optimality vs n (seed means) of the Bradley-Terry reduction beside the reward version's
    process-supervised and oracle learners on the same datasets, one panel per family."""
    by_family = {d["family"]: d for d in rates}
    fig, axes = new_figure(1, len(prefs), width=4.2 * len(prefs), height=3.8, squeeze=False)
    for ax, doc in zip(axes[0], prefs):
        n = np.asarray(doc["n_trajectories"], float)
        pref = np.mean(doc["subopt"]["preference"], axis=0)
        ax.plot(n, pref, "o-", color="C4", label=f"preference (BT): slope {loglog_slope(n, pref):.2f}")
        for m in ("process", "oracle", "naive"):
            if m in by_family[doc["family"]]["subopt"]:
                mean = np.mean(by_family[doc["family"]]["subopt"][m], axis=0)
                ax.plot(n, mean, "o-", color=COLORS[m], label=f"{LABELS[m]}: slope {loglog_slope(n, mean):.2f}")
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="trajectories n",
            ylabel="sub-optimality (seed mean)",
            title=f"{doc['family']}: Bradley-Terry reduction",
        )
        ax.legend(fontsize=7)
    save_figure(fig, out_png)


def rate_rows(rates: list[dict]) -> list[dict]:
    """The data of the rate figure (the paper's main comparison): per family and n, the seed-mean
    sub-optimality of outcome supervision (the reduction), process supervision, the oracle and the naive
    trajectory learner; one row per (family, n)."""
    rows = []
    for doc in rates:
        means = {k: np.asarray(v, float).mean(axis=0) for k, v in doc["subopt"].items()}
        for j, n in enumerate(doc["n_trajectories"]):
            rows.append({"family": doc["family"], "n": n, **{k: float(v[j]) for k, v in means.items()}})
    return rows


def _write_csv(path: str, rows: list[dict]) -> None:
    """A tidy CSV (one row per point, the columns of the first row), written atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def make_figures(
    rate_files: list[str],
    horizon_files: list[str],
    eps_files: list[str],
    samples_files: list[str],
    target: float,
    lemma_json: str,
    prm_json: str,
    preference_files: list[str],
    rate_png: str,
    rate_csv: str,
    coverage_png: str,
    lemma_png: str,
    prm_png: str,
    horizon_gap_png: str,
    preference_png: str,
) -> None:
    """Step outcome_process_figures: every figure, from the experiments' seed groups merged in seed order."""
    rates = merged_by(rate_files, "family")
    plot_rate(rates, rate_png)
    _write_csv(rate_csv, rate_rows(rates))
    samples = merge_seed_groups(samples_files)
    horizon = merge_seed_groups(horizon_files)
    plot_coverage(horizon, merge_seed_groups(eps_files), samples, sample_complexity(samples, target), coverage_png)
    plot_lemma(read_json(lemma_json), lemma_png)
    plot_prm(read_json(prm_json), prm_png)
    plot_horizon_gap(horizon_curves(horizon), horizon_gap_png)
    plot_preference(rates, merged_by(preference_files, "family"), preference_png)
