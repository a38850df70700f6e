"""What each step of the outcome_process DAG does (workflow/rules/outcome_process.smk); one function per script."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, read_json, write_json

from . import experiments, figures
from .experiments import loglog_slope
from .preference import preference_rate_job

DECLARATION = Path(__file__).with_name("claims.yaml")


def rate_experiment(family: str, spec: dict, eps: float, seeds: list[int], n_grid: list[int], beta: float,
                    lsq: dict, out_json: str) -> None:
    """Sub-optimality vs n for one family (outcome reduction, process, oracle)."""
    write_json(out_json, experiments.run_rate(family, spec, eps, list(seeds), list(n_grid), beta, lsq))


def sweep_experiment(sweep: str, points: list[dict], chain: dict, n: int, seeds: list[int], repeats: int,
                     beta: float, lsq: dict, out_json: str) -> None:
    """One coverage sweep on the chain (horizon or eps)."""
    write_json(out_json, experiments.run_sweep(sweep, points, chain, n, list(seeds), repeats, beta, lsq))


def sample_complexity_experiment(points: list[dict], chain: dict, n_grid: list[int], seeds: list[int],
                                 beta: float, lsq: dict, out_json: str) -> None:
    """The horizon sweep on a grid of n (trajectories needed to reach a per-step accuracy)."""
    write_json(out_json, experiments.run_sample_complexity(points, chain, list(n_grid), list(seeds), beta, lsq))


def lemma_experiment(families: list[str], specs: dict, eps: float, sweep_points: dict, chain: dict,
                     n_policies: int, seed: int, out_json: str) -> None:
    """Exact change-of-trajectory-measure ratios against both coverage coefficients."""
    write_json(out_json, experiments.run_lemma(families, specs, eps, sweep_points, chain, n_policies, seed))


def prm_experiment(families: list[str], specs: dict, eps: float, n_instances: int, rollouts: list[int],
                   out_json: str) -> None:
    """A^mu vs Q^mu of a sub-optimal mu as process rewards."""
    write_json(out_json, experiments.run_prm(families, specs, eps, n_instances, list(rollouts)))


def preference_experiment(family: str, spec: dict, eps: float, seeds: list[int], n_grid: list[int], beta: float,
                          bt: dict, out_json: str) -> None:
    """The Bradley-Terry version of the reduction on one family (same instances and datasets as the rate step)."""
    preference_rate_job(family, spec, eps, seeds, n_grid, beta, bt, out_json)


def make_figures(rate_files: list[str], horizon_json: str, eps_json: str, samples_json: str, target: float,
                 lemma_json: str, prm_json: str, preference_files: list[str], rate_png: str, coverage_png: str,
                 lemma_png: str, prm_png: str, horizon_gap_png: str, preference_png: str) -> None:
    rates = [read_json(f) for f in rate_files]
    figures.plot_rate(rates, rate_png)
    samples = read_json(samples_json)
    horizon = read_json(horizon_json)
    figures.plot_coverage(horizon, read_json(eps_json), samples, sample_complexity(samples, target), coverage_png)
    figures.plot_lemma(read_json(lemma_json), lemma_png)
    figures.plot_prm(read_json(prm_json), prm_png)
    figures.plot_horizon_gap(horizon_curves(horizon), horizon_gap_png)
    figures.plot_preference(rates, [read_json(f) for f in preference_files], preference_png)


# --- claims ---------------------------------------------------------------------------------------

def _seed_means(doc: dict, method: str, axis: int) -> np.ndarray:
    return np.asarray(doc["subopt"][method], float).mean(axis)


def sample_complexity(doc: dict, target: float) -> dict:
    """Per learner: C_traj, C_sa and the trajectories needed to reach sub-optimality / H <= target at each horizon."""
    H = np.array([p["horizon"] for p in doc["points"]], float)
    out = {"c_traj": np.asarray(doc["coverage"]["c_traj"]).max(1).tolist(),
           "c_sa": np.asarray(doc["coverage"]["c_sa"]).max(1).tolist(), "n_max": max(doc["n_trajectories"]),
           "target_per_step": target, "horizons": H.tolist(), "needed": {}}
    for m, sub in doc["subopt"].items():
        per_step = np.asarray(sub, float).mean(1) / H[:, None]                     # (point, n)
        out["needed"][m] = [experiments.trajectories_to_reach(doc["n_trajectories"], c, target) for c in per_step]
    return out


def _ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a / b, NaN where b is 0 (a point where process supervision is exact carries no excess-error information)."""
    return np.divide(a, b, out=np.full(len(a), np.nan), where=b > 0)


def horizon_curves(doc: dict) -> dict:
    """Seed means along the horizon sweep: H, sub-optimality of each learner, the outcome-to-process and
    naive-to-process ratios (the constants at fixed n; NaN where process supervision is exact) and C_traj."""
    H = np.array([p["horizon"] for p in doc["points"]], float)
    cur = {k: _seed_means(doc, k, 1) for k in ("outcome", "process", "naive")}
    return {"H": H, **cur, "ratio": _ratio(cur["outcome"], cur["process"]),
            "naive_ratio": _ratio(cur["naive"], cur["process"]),
            "c_traj": np.asarray(doc["coverage"]["c_traj"], float).mean(axis=1)}


def claims_metrics(rate_files: list[str], horizon_json: str, eps_json: str, samples_json: str, target: float,
                   lemma_json: str, prm_json: str, preference_files: list[str]) -> dict:
    """The flat metric dict claims.yaml reads (scalars from seed-mean curves; lists over PRM instances)."""
    m: dict = {}
    for doc in map(read_json, rate_files):
        f, n = doc["family"], doc["n_trajectories"]
        curves = {k: _seed_means(doc, k, 0) for k in ("outcome", "process", "oracle", "naive")}
        for k, c in curves.items():
            m[f"rate_slope_{k}_{f}"] = loglog_slope(n, c)
        ok = (curves["outcome"] > 0) & (curves["process"] > 0)
        m[f"rate_ratio_outcome_process_{f}"] = (float(np.exp(np.mean(np.log(curves["outcome"][ok] / curves["process"][ok]))))
                                                if ok.any() else float("nan"))
        m[f"rate_c_sa_{f}"] = float(np.median(doc["coverage"]["c_sa"]))
        m[f"rate_c_traj_{f}"] = float(np.median(doc["coverage"]["c_traj"]))

    hs = read_json(horizon_json)
    c_sa, c_traj = np.asarray(hs["coverage"]["c_sa"]).max(1), np.asarray(hs["coverage"]["c_traj"]).max(1)
    cur = {k: _seed_means(hs, k, 1) for k in ("outcome", "process", "naive")}
    m["hsweep_csa_spread"] = float(c_sa.max() / c_sa.min())
    m["hsweep_ctraj_growth"] = float(c_traj.max() / c_traj.min())
    m["hsweep_slope_outcome"] = loglog_slope(c_traj, cur["outcome"])
    m["hsweep_excess_slope_outcome"] = loglog_slope(c_traj, _ratio(cur["outcome"], cur["process"]))
    m["hsweep_excess_slope_naive"] = loglog_slope(c_traj, _ratio(cur["naive"], cur["process"]))
    hc = horizon_curves(hs)
    m["gap_ratio_slope_H"] = loglog_slope(hc["H"], hc["ratio"])
    m["naive_gap_ratio_slope_H"] = loglog_slope(hc["H"], hc["naive_ratio"])
    m["ctraj_slope_H"] = loglog_slope(hc["H"], hc["c_traj"])

    sc = sample_complexity(read_json(samples_json), target)
    c_traj_s = np.asarray(sc["c_traj"])
    m["hsc_csa_spread"] = float(max(sc["c_sa"]) / min(sc["c_sa"]))
    for k in ("outcome", "process"):
        needed = np.asarray(sc["needed"][k])
        m[f"hsc_slope_{k}"] = loglog_slope(c_traj_s, needed) if np.isfinite(needed).all() else float("nan")
    # a learner that never reaches the target needs more than the largest n: a lower bound on its slope
    naive = np.minimum(np.asarray(sc["needed"]["naive"]), sc["n_max"])
    m["hsc_slope_naive_lb"] = loglog_slope(c_traj_s, naive)

    es = read_json(eps_json)
    c_sa_e = np.asarray(es["coverage"]["c_sa"]).max(1)
    for k in ("outcome", "process", "naive"):
        m[f"esweep_slope_{k}_sa"] = loglog_slope(c_sa_e, _seed_means(es, k, 1))

    rows = read_json(lemma_json)["rows"]
    m["lemma_max_kappa_over_h3_csa"] = max(r["kappa_over_h3_csa"] for r in rows)
    m["lemma_min_kappa_over_csa"] = min(r["kappa"] / r["c_sa"] for r in rows)
    m["lemma_max_kappa_over_h_csa"] = max(r["kappa"] / (r["horizon"] * r["c_sa"]) for r in rows)
    top = max(r["horizon"] for r in rows if r["mdp"].startswith("horizon:"))
    star = [r for r in rows if r["mdp"].startswith("horizon:") and r["horizon"] == top and r["policy"] == "optimal"]
    m["lemma_kappa_over_ctraj_maxH"] = star[0]["kappa_over_ctraj"]

    prm = read_json(prm_json)["families"]
    for f, rec in prm.items():
        m[f"prm_adv_subopt_{f}"] = rec["subopt"]["advantage"]
        m[f"prm_q_subopt_{f}"] = rec["subopt"]["q_value"]
        m[f"prm_mu_subopt_{f}"] = rec["subopt"]["mu"]
        m[f"prm_q_fail_rate_{f}"] = float(np.mean(np.asarray(rec["subopt"]["q_value"]) > 1e-9))
    for doc in map(read_json, preference_files):
        m[f"rate_slope_preference_{doc['family']}"] = loglog_slope(doc["n_trajectories"],
                                                                   _seed_means(doc, "preference", 0))
    return m


def write_paper_claims(rate_files: list[str], horizon_json: str, eps_json: str, samples_json: str, target: float,
                       lemma_json: str, prm_json: str, preference_files: list[str], families: list[str],
                       prm_families: list[str], scale: str, claims_path: str, summary_path: str) -> None:
    measured = claims_metrics(rate_files, horizon_json, eps_json, samples_json, target, lemma_json, prm_json,
                              preference_files)
    write_json(summary_path, measured)
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale,
                          expand_over={"family": families, "prm_family": prm_families})
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
