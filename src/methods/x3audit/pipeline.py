"""What each step of the x3audit DAG does (workflow/rules/x3audit.smk): the figure and the claims
table over the experiments of issue 30. The experiments themselves run in their papers' packages
(binary_denoising.exact, principal_agent.lower_bound_known / lower_bound_kn / zooming, outcome_process's
horizon sweep and outcome_process.preference); this
module reads only their JSON outputs."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, read_json, write_json
from methods.common.plotting import new_figure, save_figure

DECLARATION = Path(__file__).with_name("claims.yaml")


def bd_metrics(doc: dict) -> dict:
    """The bd_* metrics of claims.yaml from one seed's binary_denoising exact-enumeration JSON."""
    rows = sorted(doc["rows"], key=lambda r: r["alpha"])
    etas = sorted(float(e) for e in doc["etas"])
    main = str(doc["eta"])
    low, high = rows[0], rows[-1]
    return {
        "bd_slem_low": low["slem"], "bd_slem_high": high["slem"],
        "bd_dobrushin_low": low["dobrushin"], "bd_dobrushin_high": high["dobrushin"],
        "bd_rate_excess": max(r["slem"] - r["dobrushin"] for r in rows),
        "bd_bias_low": low["bias_tv"][main], "bd_bias_high": high["bias_tv"][main],
        "bd_bias_eta_small": float(np.mean([r["bias_tv"][str(etas[0])] for r in rows])),
        "bd_bias_eta_large": float(np.mean([r["bias_tv"][str(etas[-1])] for r in rows])),
        "bd_mh_tv_max": max(max(r["mh_tv"].values()) for r in rows),
        "bd_marginal_z_max": max(r["chain_marginal_z"] for r in rows),
        "bd_z_bound": doc["z_bound"],
    }


def pa_metrics(doc: dict) -> dict:
    """The pa_* metrics of claims.yaml from one seed's principal_agent lower-bound JSON."""
    out = {}
    for name, r in doc["algorithms"].items():
        norm = r["regret_over_sqrt_T"]
        out[f"pa_lb_slope_{name}"] = r["slope"]
        out[f"pa_lb_norm_ratio_{name}"] = norm[-1] / norm[0]
    return out


def pa_kn_metrics(doc: dict) -> dict:
    """The pa_kn_* metrics of claims.yaml from one seed's K x N grid JSON (principal_agent.lower_bound_kn)."""
    return {"pa_kn_slope_on_bound": doc["slope_on_bound"], "pa_kn_ratio_spread": doc["ratio_spread"],
            "pa_kn_ratio_min": doc["ratio_min"], "pa_kn_ratio_max": doc["ratio_max"]}


def pa_zoom_metrics(doc: dict) -> dict:
    """The pa_zoom_* metrics of claims.yaml from one seed's zooming JSON (principal_agent.zooming)."""
    z = doc["learners"]["zooming"]
    return {"pa_zoom_slope": z["slope"], "pa_zoom_rate": doc["rate_exponent"], "pa_zoom_regret_min": z["regret_min"],
            "pa_zoom_grid_slope": doc["learners"]["uniform_grid"]["slope"]}


def op_bt_metrics(docs: list[dict]) -> dict:
    """op_bt_slope_{preference, process, oracle}_{family}: log-log slopes of the seed-mean curves over n
    (computed in outcome_process.preference as the reward version's are)."""
    return {f"op_bt_slope_{m}_{doc['family']}": v for doc in docs for m, v in doc["slopes"].items()}


def op_horizon_curves(doc: dict) -> dict:
    """Seed means over outcome_process's horizon sweep: H, outcome and process sub-optimality, their
    ratio (the outcome-to-process constant at fixed n) and the trajectory coverage C_traj."""
    H = np.array([p["horizon"] for p in doc["points"]], float)
    outcome = np.array(doc["subopt"]["outcome"]).mean(axis=1)
    process = np.array(doc["subopt"]["process"]).mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(process > 0, outcome / process, np.nan)
    c_traj = np.array(doc["coverage"]["c_traj"]).mean(axis=1)
    return {"H": H, "outcome": outcome, "process": process, "ratio": ratio, "c_traj": c_traj}


def _loglog_slope(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 2 or not np.all(np.isfinite(y)) or np.any(y <= 0):
        return float("nan")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def op_metrics(doc: dict) -> dict:
    """The op_* metrics of claims.yaml: log-log slopes in H of the outcome-to-process ratio and of C_traj."""
    c = op_horizon_curves(doc)
    return {"op_gap_ratio_slope_H": _loglog_slope(c["H"], c["ratio"]),
            "op_ctraj_slope_H": _loglog_slope(c["H"], c["c_traj"]),
            "op_gap_ratio_max": float(np.nanmax(c["ratio"])) if np.isfinite(c["ratio"]).any() else float("nan")}


def claims_metrics(bd_files: list[str], pa_files: list[str], op_json: str, kn_files: list[str],
                   zoom_files: list[str], bt_files: list[str]) -> dict:
    """Flat {metric: list over seeds (bd_*, pa_*) or one value (op_*, from seed means)} read by claims.yaml."""
    per_seed = [{**bd_metrics(read_json(b)), **pa_metrics(read_json(p)), **pa_kn_metrics(read_json(k)),
                 **pa_zoom_metrics(read_json(z))}
                for b, p, k, z in zip(bd_files, pa_files, kn_files, zoom_files)]
    return {**{k: [m[k] for m in per_seed] for k in per_seed[0]}, **op_metrics(read_json(op_json)),
            **op_bt_metrics([read_json(f) for f in bt_files])}


def op_figure(op_json: str, out_png: str) -> None:
    """The outcome-to-process ratio against H, with H^{3/2} and C_traj scaled to its first point."""
    c = op_horizon_curves(read_json(op_json))
    fig, ax = new_figure(width=6.4, height=4.2)
    ax.plot(c["H"], c["ratio"], "o-", color="C0", label="outcome / process sub-optimality (seed means)")
    r0 = c["ratio"][np.isfinite(c["ratio"])][0] if np.isfinite(c["ratio"]).any() else 1.0
    ax.plot(c["H"], r0 * (c["H"] / c["H"][0]) ** 1.5, "k--", lw=1, label="H^{3/2} (assumed poly(H))")
    ax.plot(c["H"], r0 * c["c_traj"] / c["c_traj"][0], ":", color="C3", label="C_traj (trajectory coverage)")
    ax.set(xscale="log", yscale="log", xlabel="horizon H", ylabel="ratio (scaled at the first H)",
           title="outcome_process: the outcome-to-process constant against H")
    ax.legend(fontsize=8)
    save_figure(fig, out_png)


def pa_figure(pa_files: list[str], out_png: str) -> None:
    """Pseudo-regret on the two-point family against T (one line per algorithm and seed), sqrt(T) reference."""
    docs = [read_json(f) for f in pa_files]
    fig, ax = new_figure(width=6.4, height=4.2)
    T = np.array(docs[0]["horizons"], float)
    for i, name in enumerate(docs[0]["algorithms"]):
        for k, doc in enumerate(docs):
            ax.plot(T, doc["algorithms"][name]["regret"], "o-", color=f"C{i}", alpha=0.8,
                    label=name if k == 0 else None)
    first = min(d["algorithms"][n]["regret"][0] for d in docs for n in d["algorithms"])
    ax.plot(T, first * np.sqrt(T / T[0]), "k--", lw=1, label="sqrt(T) (the bound's rate)")
    ax.set(xscale="log", yscale="log", xlabel="horizon T", ylabel="pseudo-regret",
           title=f"known greedy responses: two-point family, eps = {docs[0]['c']}/sqrt(T)")
    ax.legend(fontsize=8)
    save_figure(fig, out_png)


def pa_kn_figure(kn_files: list[str], out_png: str) -> None:
    """Regret on the hidden-subset family against min{sqrt(K T log N), K sqrt(T)} over the K x N grid."""
    docs = [read_json(f) for f in kn_files]
    fig, (ax1, ax2) = new_figure(1, 2, width=10.5, height=4.0)
    types = docs[0]["types"]
    markers = "os^vD<>p"
    for d, doc in enumerate(docs):
        for r in doc["rows"]:
            ki, ni = types.index(r["K"]), doc["arms"].index(r["N"])
            ax1.plot(r["bound"], r["regret"], markers[ni % len(markers)], color=f"C{ki}", alpha=0.8,
                     label=f"K={r['K']}, N={r['N']}" if d == 0 else None)
    b = np.array([r["bound"] for doc in docs for r in doc["rows"]])
    ratio = np.array([r["ratio"] for doc in docs for r in doc["rows"]])
    xs = np.array([b.min(), b.max()])
    ax1.plot(xs, np.median(ratio) * xs, "k--", lw=1, label=f"c * bound, c = {np.median(ratio):.3f} (median)")
    ax1.set(xscale="log", yscale="log", xlabel="min{sqrt(K T log N), K sqrt(T)}", ylabel="pseudo-regret",
            title=f"hidden-subset family, T = {docs[0]['horizon']}, Exp3-linear")
    ax1.legend(fontsize=6, ncol=2)
    for ki, K in enumerate(types):
        for d, doc in enumerate(docs):
            rows = [r for r in doc["rows"] if r["K"] == K]
            ax2.plot([r["N"] for r in rows], [r["ratio"] for r in rows], "o-", color=f"C{ki}", alpha=0.8,
                     label=f"K={K}" if d == 0 else None)
    ax2.set(xscale="log", xlabel="arms N", ylabel="regret / bound", title="ratio to the bound (one line per seed)")
    ax2.set_ylim(bottom=0)
    ax2.legend(fontsize=8)
    save_figure(fig, out_png)


def pa_zoom_figure(zoom_files: list[str], out_png: str) -> None:
    """Regret of the zooming learner and the T-tuned uniform grid against T, with T^{(N+1)/(N+2)}."""
    docs = [read_json(f) for f in zoom_files]
    fig, (ax1, ax2) = new_figure(1, 2, width=10.5, height=4.0)
    T = np.array(docs[0]["horizons"], float)
    for i, name in enumerate(docs[0]["learners"]):
        for d, doc in enumerate(docs):
            r = doc["learners"][name]
            ax1.plot(T, r["regret"], "o-", color=f"C{i}", alpha=0.8, label=name if d == 0 else None)
            ax2.plot(T, r["n_cells"], "o-", color=f"C{i}", alpha=0.8, label=name if d == 0 else None)
    rate = docs[0]["rate_exponent"]
    first = min(d["learners"]["zooming"]["regret"][0] for d in docs)
    ax1.plot(T, first * (T / T[0]) ** rate, "k--", lw=1, label=f"T^{rate:.2f} (row (e) rate)")
    ax1.set(xscale="log", yscale="log", xlabel="horizon T", ylabel="regret vs best fixed incentive",
            title=f"smooth, general incentives (N={docs[0]['n_arms']}, L={docs[0]['lipschitz']:g}), adaptive adversary")
    ax2.set(xscale="log", yscale="log", xlabel="horizon T", ylabel="active cells", title="partition size")
    ax1.legend(fontsize=8)
    ax2.legend(fontsize=8)
    save_figure(fig, out_png)


def op_bt_figure(bt_files: list[str], out_png: str) -> None:
    """Sub-optimality vs n (seed means) of the BT reduction, process supervision and the oracle, one panel per family."""
    docs = [read_json(f) for f in bt_files]
    fig, axes = new_figure(1, len(docs), width=4.2 * len(docs), height=3.8)
    axes = np.atleast_1d(axes)
    for ax, doc in zip(axes, docs):
        n = np.array(doc["n_trajectories"], float)
        for i, (m, sub) in enumerate(doc["subopt"].items()):
            ax.plot(n, np.mean(sub, axis=0), "o-", color=f"C{i}", label=m)
        ax.set(xscale="log", yscale="log", xlabel="trajectories n", ylabel="sub-optimality (seed mean)",
               title=f"{doc['family']}: Bradley-Terry reduction")
        ax.legend(fontsize=8)
    save_figure(fig, out_png)


def bd_figure(bd_files: list[str], out_png: str) -> None:
    """Left: measured SLEM and Dobrushin's rate against alpha; right: TV bias of the unadjusted chain."""
    docs = [read_json(f) for f in bd_files]
    fig, (ax1, ax2) = new_figure(1, 2, width=10, height=3.8)
    for i, doc in enumerate(docs):
        rows = sorted(doc["rows"], key=lambda r: r["alpha"])
        a = [r["alpha"] for r in rows]
        lab = i == 0
        ax1.plot(a, [r["slem"] for r in rows], "o-", color="C0", label="measured (SLEM)" if lab else None)
        ax1.plot(a, [r["dobrushin"] for r in rows], "s--", color="C3",
                 label="theory (Dobrushin coefficient)" if lab else None)
        for j, e in enumerate(sorted(doc["etas"], key=float)):
            ax2.plot(a, [r["bias_tv"][str(e)] for r in rows], "o-", color=f"C{j}", alpha=0.8,
                     label=f"unadjusted, eta={e}" if lab else None)
    ax1.axhline(1.0, color="grey", lw=0.8)
    ax1.set(xscale="log", xlabel="alpha (small = high noise)", ylabel="contraction rate per step",
            title=f"one-stage chain, d={docs[0]['d']} ({docs[0]['n_states']} states)")
    ax2.set(xscale="log", xlabel="alpha", ylabel="TV(stationary law, q_alpha)", title="bias of the unadjusted chain")
    ax1.legend(fontsize=8)
    ax2.legend(fontsize=8)
    save_figure(fig, out_png)


def write_paper_claims(bd_files: list[str], pa_files: list[str], op_json: str, kn_files: list[str],
                       zoom_files: list[str], bt_files: list[str], scale: str, claims_path: str,
                       summary_path: str) -> None:
    """Step x3audit_claims: measured metrics and the verdicts of claims.yaml."""
    measured = claims_metrics(bd_files, pa_files, op_json, kn_files, zoom_files, bt_files)
    write_json(summary_path, measured)
    algorithms = sorted(read_json(pa_files[0])["algorithms"])
    families = [read_json(f)["family"] for f in bt_files]
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale,
                          expand_over={"pa_algorithm": algorithms, "op_family": families})
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
