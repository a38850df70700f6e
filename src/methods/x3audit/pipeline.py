"""What each step of the x3audit DAG does (workflow/rules/x3audit.smk): the figure and the claims
table over the experiments of issue 30. The experiments themselves run in their papers' packages
(binary_denoising.exact, principal_agent.lower_bound_known, outcome_process's horizon sweep); this
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


def claims_metrics(bd_files: list[str], pa_files: list[str], op_json: str) -> dict:
    """Flat {metric: list over seeds (bd_*, pa_*) or one value (op_*, from seed means)} read by claims.yaml."""
    per_seed = [{**bd_metrics(read_json(b)), **pa_metrics(read_json(p))} for b, p in zip(bd_files, pa_files)]
    return {**{k: [m[k] for m in per_seed] for k in per_seed[0]}, **op_metrics(read_json(op_json))}


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


def write_paper_claims(bd_files: list[str], pa_files: list[str], op_json: str, scale: str, claims_path: str,
                       summary_path: str) -> None:
    """Step x3audit_claims: measured metrics and the verdicts of claims.yaml."""
    measured = claims_metrics(bd_files, pa_files, op_json)
    write_json(summary_path, measured)
    algorithms = sorted(read_json(pa_files[0])["algorithms"])
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale, expand_over={"pa_algorithm": algorithms})
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
