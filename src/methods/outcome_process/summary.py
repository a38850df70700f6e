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


N_GROUPS = 5  # disjoint seed groups: the independent draws of every slope (each its own MDPs and datasets)
LEARNERS = ("outcome", "process", "oracle", "naive", *experiments.TRIVIAL)


def _slice(doc: dict, seeds: list[int] | None = None, drop: int | None = None) -> dict:
    """The document restricted to the seeds at positions `seeds` and without grid point `drop` (the n grid of
    a rate document, arrays (seed, n); the sweep points of a sweep document, arrays (point, seed, ...))."""
    out = dict(doc)
    sweep = "points" in doc
    seed_axis, point_axis = (1, 0) if sweep else (0, 1)

    def cut(a):
        a = np.asarray(a, float)
        if seeds is not None:
            a = np.take(a, seeds, axis=seed_axis if a.ndim > 1 or not sweep else 0)
        if drop is not None and (a.ndim > 1 or sweep):
            a = np.delete(a, drop, axis=point_axis if a.ndim > 1 else 0)
        return a.tolist()

    out["subopt"] = {k: cut(v) for k, v in doc["subopt"].items()}
    if sweep:
        out["coverage"] = {k: cut(v) for k, v in doc["coverage"].items()}
        if drop is not None:
            out["points"] = [p for i, p in enumerate(doc["points"]) if i != drop]
    else:
        if seeds is not None:
            out["coverage"] = {k: [v[i] for i in seeds] for k, v in doc["coverage"].items()}
        if drop is not None:
            out["n_trajectories"] = [n for i, n in enumerate(doc["n_trajectories"]) if i != drop]
    return out


def _t_interval(values) -> tuple[float, float]:
    """Two-sided 95 % t interval of the mean of the group values; NaN if any is NaN."""
    from scipy import stats

    v = np.asarray(values, float)
    if len(v) < 2 or not np.isfinite(v).all():
        return float("nan"), float("nan")
    half = float(stats.t.ppf(0.975, len(v) - 1)) * float(v.std(ddof=1)) / np.sqrt(len(v))
    return float(v.mean() - half), float(v.mean() + half)


def with_uncertainty(fn, doc: dict, n_groups: int = N_GROUPS) -> dict:
    """fn(doc) -> {name: scalar} on all seeds, and for every name: `_groups` (its value on each of the
    disjoint seed groups: independent draws), `_ci_low`/`_ci_high` (95 % t interval over the groups),
    `_loo_min`/`_loo_max` (all seeds, each grid point left out) and `_loo_ci_low_max`/`_loo_ci_high_min` (the
    tightest ends of the left-out fits' group intervals: an interval condition holding on these holds on
    every left-out fit)."""
    full = fn(doc)
    n_seeds = len(doc["seeds"])
    n_points = len(doc["points"]) if "points" in doc else len(doc["n_trajectories"])
    groups = [g.tolist() for g in np.array_split(np.arange(n_seeds), min(n_groups, n_seeds))]
    grp = [fn(_slice(doc, seeds=g)) for g in groups]
    loo = [fn(_slice(doc, drop=p)) for p in range(n_points)]
    loo_grp = [[fn(_slice(doc, seeds=g, drop=p)) for g in groups] for p in range(n_points)]
    out = {}
    for k, v in full.items():
        out[k] = v
        out[f"{k}_groups"] = [g[k] for g in grp]
        out[f"{k}_ci_low"], out[f"{k}_ci_high"] = _t_interval(out[f"{k}_groups"])
        vals = [x[k] for x in loo]
        out[f"{k}_loo_min"], out[f"{k}_loo_max"] = float(np.min(vals)), float(np.max(vals))
        ends = [_t_interval([x[k] for x in row]) for row in loo_grp]
        out[f"{k}_loo_ci_low_max"] = float(max(e[0] for e in ends))
        out[f"{k}_loo_ci_high_min"] = float(min(e[1] for e in ends))
    return out


def rate_doc_metrics(doc: dict) -> dict:
    """Slopes of the seed-mean sub-optimality on n of every learner, and each slope minus process's."""
    f, n = doc["family"], doc["n_trajectories"]
    m = {}
    for k in LEARNERS:
        if k in doc["subopt"]:
            m[f"rate_slope_{k}_{f}"] = loglog_slope(n, _seed_means(doc, k, 0))
    for k in LEARNERS:
        if k != "process" and f"rate_slope_{k}_{f}" in m:
            m[f"rate_diff_{k}_{f}"] = m[f"rate_slope_{k}_{f}"] - m[f"rate_slope_process_{f}"]
    return m


def hsweep_metrics(hs: dict) -> dict:
    """Horizon sweep: each learner's excess over process (ratio of seed means) against C_traj, and the
    outcome-to-process constant's slope in H against C_traj's."""
    c_traj = np.asarray(hs["coverage"]["c_traj"]).max(1)
    cur = {k: _seed_means(hs, k, 1) for k in LEARNERS if k in hs["subopt"]}
    m = {"hsweep_slope_outcome": loglog_slope(c_traj, cur["outcome"])}
    for k in cur:
        if k != "process":
            m[f"hsweep_excess_slope_{k}"] = loglog_slope(c_traj, _ratio(cur[k], cur["process"]))
    H = np.array([p["horizon"] for p in hs["points"]], float)
    for k in cur:
        if k != "process":
            name = "gap_ratio_slope_H" if k == "outcome" else f"{k}_gap_ratio_slope_H"
            m[name] = loglog_slope(H, _ratio(cur[k], cur["process"]))
    m["ctraj_slope_H"] = loglog_slope(H, np.asarray(hs["coverage"]["c_traj"], float).mean(axis=1))
    return m


def esweep_metrics(es: dict) -> dict:
    """Behaviour sweep: each learner's slope on C_sa, and its difference from process's."""
    c_sa = np.asarray(es["coverage"]["c_sa"]).max(1)
    m = {f"esweep_slope_{k}_sa": loglog_slope(c_sa, _seed_means(es, k, 1)) for k in LEARNERS if k in es["subopt"]}
    for k in LEARNERS:
        if k != "process" and f"esweep_slope_{k}_sa" in m:
            m[f"esweep_diff_{k}_sa"] = m[f"esweep_slope_{k}_sa"] - m["esweep_slope_process_sa"]
    return m


def hsc_metrics(doc: dict, target: float) -> dict:
    """Sample complexity on the horizon sweep: slope on C_traj of the trajectories each learner needs (NaN if
    it misses the target somewhere); for learners that miss it, the lower bound with the miss at the largest n."""
    sc = sample_complexity(doc, target)
    c_traj = np.asarray(sc["c_traj"])
    m = {}
    for k in ("outcome", "process"):
        needed = np.asarray(sc["needed"][k])
        m[f"hsc_slope_{k}"] = loglog_slope(c_traj, needed) if np.isfinite(needed).all() else float("nan")
    # a learner that never reaches the target needs more than the largest n: a lower bound on its slope
    m["hsc_slope_naive_lb"] = loglog_slope(c_traj, np.minimum(np.asarray(sc["needed"]["naive"]), sc["n_max"]))
    return m


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
    """The flat metric dict claims.yaml reads: slopes on all seeds with their per-group values, intervals and
    leave-one-grid-point-out values (`with_uncertainty`); lists over PRM instances. The experiments over
    seeds come as the files of their seed groups (merge_seed_groups)."""
    m: dict = {}
    rate_docs = {doc["family"]: doc for doc in merged_by(rate_files, "family")}
    for f, doc in rate_docs.items():
        n = doc["n_trajectories"]
        curves = {k: _seed_means(doc, k, 0) for k in ("outcome", "process")}
        m.update(with_uncertainty(rate_doc_metrics, doc))
        ok = (curves["outcome"] > 0) & (curves["process"] > 0)
        m[f"rate_ratio_outcome_process_{f}"] = (
            float(np.exp(np.mean(np.log(curves["outcome"][ok] / curves["process"][ok])))) if ok.any() else float("nan")
        )
        m[f"rate_c_sa_{f}"] = float(np.median(doc["coverage"]["c_sa"]))
        m[f"rate_c_traj_{f}"] = float(np.median(doc["coverage"]["c_traj"]))
        del n

    hs = merge_seed_groups(horizon_files)
    c_sa, c_traj = np.asarray(hs["coverage"]["c_sa"]).max(1), np.asarray(hs["coverage"]["c_traj"]).max(1)
    m["hsweep_csa_spread"] = float(c_sa.max() / c_sa.min())
    m["hsweep_ctraj_growth"] = float(c_traj.max() / c_traj.min())
    m.update(with_uncertainty(hsweep_metrics, hs))

    sc_doc = merge_seed_groups(samples_files)
    sc = sample_complexity(sc_doc, target)
    m["hsc_csa_spread"] = float(max(sc["c_sa"]) / min(sc["c_sa"]))
    m.update(with_uncertainty(lambda d: hsc_metrics(d, target), sc_doc))

    m.update(with_uncertainty(esweep_metrics, merge_seed_groups(eps_files)))

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
        f = doc["family"]
        # the preference learner against the rate experiment's process curve (same seeds, MDPs, n grid)
        both = dict(doc)
        both["subopt"] = {"preference": doc["subopt"]["preference"], "process": rate_docs[f]["subopt"]["process"]}
        both["coverage"] = rate_docs[f]["coverage"]

        def pref(d, f=f):
            n = d["n_trajectories"]
            slope = loglog_slope(n, _seed_means(d, "preference", 0))
            return {
                f"rate_slope_preference_{f}": slope,
                f"rate_diff_preference_{f}": slope - loglog_slope(n, _seed_means(d, "process", 0)),
            }

        m.update(with_uncertainty(pref, both))
    return m
