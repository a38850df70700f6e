"""From the experiment steps' JSON to the numbers the claims and figures read: the seed groups of one
experiment merged in seed order (`merge_seed_groups`: one job per seed at paper scale gives the document of
one job over all seeds), sample complexities, the horizon-gap curves, and the flat metric dict of claims.yaml."""

from __future__ import annotations

import numpy as np

from methods.common.io import read_json

from . import experiments
from .experiments import loglog_slope


def merge_seed_groups(files: list[str]) -> dict:
    """One experiment's document from the documents of its seed groups (files in seed order): the seeds joined
    and every per-seed array of `subopt` and `coverage` concatenated along its seed axis (0 for the rate and
    preference experiments, arrays (seed, ...); 1 for the coverage sweeps and the sample-complexity grid,
    arrays (point, seed, ...)). A single file is returned as it is."""
    docs = [read_json(f) for f in files]
    if len(docs) == 1:
        return docs[0]
    axis = 1 if "points" in docs[0] else 0
    out = dict(docs[0])
    out["seeds"] = [s for d in docs for s in d["seeds"]]
    for key in ("subopt", "coverage"):
        if key in out:
            out[key] = {
                k: np.concatenate([np.asarray(d[key][k], float) for d in docs], axis=axis).tolist() for k in out[key]
            }
    if "slopes" in out:
        out["slopes"] = {
            k: loglog_slope(out["n_trajectories"], np.asarray(v, float).mean(axis=0)) for k, v in out["subopt"].items()
        }
    return out


def merged_by(files: list[str], key: str) -> list[dict]:
    """merge_seed_groups for each experiment of a step (its files grouped by the documents' `key`, e.g. the
    family), in the order the experiments first appear."""
    groups: dict = {}
    for f in files:
        groups.setdefault(read_json(f)[key], []).append(f)
    return [merge_seed_groups(fs) for fs in groups.values()]


def _seed_means(doc: dict, method: str, axis: int) -> np.ndarray:
    return np.asarray(doc["subopt"][method], float).mean(axis)


def sample_complexity(doc: dict, target: float) -> dict:
    """Per learner: C_traj, C_sa and the trajectories needed to reach sub-optimality / H <= target at each horizon."""
    H = np.array([p["horizon"] for p in doc["points"]], float)
    out = {
        "c_traj": np.asarray(doc["coverage"]["c_traj"]).max(1).tolist(),
        "c_sa": np.asarray(doc["coverage"]["c_sa"]).max(1).tolist(),
        "n_max": max(doc["n_trajectories"]),
        "target_per_step": target,
        "horizons": H.tolist(),
        "needed": {},
    }
    for m, sub in doc["subopt"].items():
        per_step = np.asarray(sub, float).mean(1) / H[:, None]  # (point, n)
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
    return {
        "H": H,
        **cur,
        "ratio": _ratio(cur["outcome"], cur["process"]),
        "naive_ratio": _ratio(cur["naive"], cur["process"]),
        "c_traj": np.asarray(doc["coverage"]["c_traj"], float).mean(axis=1),
    }


def claims_metrics(
    rate_files: list[str],
    horizon_files: list[str],
    eps_files: list[str],
    samples_files: list[str],
    target: float,
    lemma_json: str,
    prm_json: str,
    preference_files: list[str],
) -> dict:
    """The flat metric dict claims.yaml reads (scalars from seed-mean curves; lists over PRM instances). The
    experiments over seeds come as the files of their seed groups (merge_seed_groups)."""
    m: dict = {}
    for doc in merged_by(rate_files, "family"):
        f, n = doc["family"], doc["n_trajectories"]
        curves = {k: _seed_means(doc, k, 0) for k in ("outcome", "process", "oracle", "naive")}
        for k, c in curves.items():
            m[f"rate_slope_{k}_{f}"] = loglog_slope(n, c)
        ok = (curves["outcome"] > 0) & (curves["process"] > 0)
        m[f"rate_ratio_outcome_process_{f}"] = (
            float(np.exp(np.mean(np.log(curves["outcome"][ok] / curves["process"][ok])))) if ok.any() else float("nan")
        )
        m[f"rate_c_sa_{f}"] = float(np.median(doc["coverage"]["c_sa"]))
        m[f"rate_c_traj_{f}"] = float(np.median(doc["coverage"]["c_traj"]))

    hs = merge_seed_groups(horizon_files)
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

    sc = sample_complexity(merge_seed_groups(samples_files), target)
    c_traj_s = np.asarray(sc["c_traj"])
    m["hsc_csa_spread"] = float(max(sc["c_sa"]) / min(sc["c_sa"]))
    for k in ("outcome", "process"):
        needed = np.asarray(sc["needed"][k])
        m[f"hsc_slope_{k}"] = loglog_slope(c_traj_s, needed) if np.isfinite(needed).all() else float("nan")
    # a learner that never reaches the target needs more than the largest n: a lower bound on its slope
    naive = np.minimum(np.asarray(sc["needed"]["naive"]), sc["n_max"])
    m["hsc_slope_naive_lb"] = loglog_slope(c_traj_s, naive)

    es = merge_seed_groups(eps_files)
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
    for doc in merged_by(preference_files, "family"):
        m[f"rate_slope_preference_{doc['family']}"] = loglog_slope(
            doc["n_trajectories"], _seed_means(doc, "preference", 0)
        )
    return m
