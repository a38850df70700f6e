"""The analysis step of principal_agent (principal_agent_analyse): slopes with bootstrap intervals, bound
ratios and per-seed comparisons from every simulation's records (summary.json), the flat `metrics` the claims
read. The simulation steps write one file per seed group; the groups of one experiment are merged here in
seed order (`merge_records`, `merge_runs`), so one job per seed (paper scale) and one job for all seeds (tiny
scale) give the same summary."""

from __future__ import annotations

import numpy as np

from methods.common.io import log, read_json, write_json

from . import analysis as A

AGNOSTIC = ("naive_grid", "lipschitz")  # lower-bound learners that do not use the responses


def merge_records(files: list[str], key: str | None = None) -> dict:
    """{value of params[key]: {"params", "records"}} of simulation files of one or several seed groups (files
    in seed order), the records of one experiment concatenated and its params' seeds joined; with key None,
    the merged document of one experiment."""
    merged: dict = {}
    for f in files:
        doc = read_json(f)
        k = doc["params"][key] if key else None
        if k not in merged:
            merged[k] = {"params": dict(doc["params"]), "records": []}
            merged[k]["params"]["seeds"] = []
        merged[k]["params"]["seeds"] += list(doc["params"]["seeds"])
        merged[k]["records"] += doc["records"]
    return merged if key else merged[None]


def merge_runs(files: list[str]) -> list[dict]:
    """The per-seed documents of a {"seeds", "runs"} step's seed groups (files in seed order), in seed order."""
    return [run for f in files for run in read_json(f)["runs"]]


def _linear_bound(r):
    return A.exp3_linear_bound(r["T"], r["rank"], r["n_actions"])


def two_point_metrics(doc: dict) -> dict:
    """Per-seed metrics of the two-point family: log-log slope of the pseudo-regret over the T grid and
    regret / sqrt(T) at the largest T over that at the smallest, per learner and for uniform play."""
    out = {}
    for name, r in {**doc["algorithms"], "uniform": doc["uniform"]}.items():
        norm = r["regret_over_sqrt_T"]
        out[f"two_point_slope_{name}"] = r["slope"]
        out[f"two_point_norm_ratio_{name}"] = norm[-1] / norm[0]
    return out


def hidden_subset_metrics(doc: dict) -> dict:
    """Per-seed metrics of the hidden-subset K x N grid: slope of regret on the bound and max/min of
    regret / bound, for Exp3-linear and for uniform play."""
    return {
        f"hidden_subset_{k}": doc[k]
        for k in (
            "slope_on_bound",
            "ratio_spread",
            "ratio_min",
            "ratio_max",
            "slope_on_bound_uniform",
            "ratio_spread_uniform",
        )
    }


def zooming_metrics(doc: dict) -> dict:
    """Per-seed metrics of the smooth general-incentive experiment (zooming, uniform grid, uniform play)."""
    L = doc["learners"]
    return {
        "zoom_slope": L["zooming"]["slope"],
        "zoom_rate": doc["rate_exponent"],
        "zoom_regret_min": L["zooming"]["regret_min"],
        "zoom_grid_slope": L["uniform_grid"]["slope"],
        "zoom_uniform_slope": L["uniform_play"]["slope"],
        "zoom_uniform_regret_min": L["uniform_play"]["regret_min"],
    }


def rate_metrics(prefix: str, fit: dict, suffix: str = "") -> dict:
    """The metrics of one fitted exponent (analysis.rate_fit): seed-mean slope, its bootstrap interval, each
    seed's slope and the leave-one-grid-point-out slopes and interval ends, named {prefix}_{what}{suffix}."""
    keys = {
        "slope": "slope",
        "lo": "lo",
        "hi": "hi",
        "seed_slope": "seeds",
        "loo_min": "loo_min",
        "loo_max": "loo_max",
        "loo_lo_max": "loo_lo_max",
        "loo_hi_min": "loo_hi_min",
    }
    return {f"{prefix}_{name}{suffix}": fit[key] for name, key in keys.items()}


def _per_seed(files: list[str], fn) -> dict:
    """{metric: list over the seeds} from the seed groups of a {"runs": [...]} step."""
    rows = [fn(doc) for doc in merge_runs(files)]
    return {k: [r[k] for r in rows] for k in rows[0]}


def analyse(
    rate_files: list[str],
    sweep_files: list[str],
    lipschitz_files: list[str],
    lower_bound_files: list[str],
    multiarm_files: list[str],
    two_point_files: list[str],
    hidden_subset_files: list[str],
    zooming_files: list[str],
    n_boot: int,
    level: float,
    out_json: str,
) -> None:
    """Slopes with intervals, bound ratios and per-seed comparisons: the flat `metrics` the claims read. Every
    argument but the last three lists the seed-group files of one step (several experiments of a step, e.g.
    the adversaries of rate, are told apart by their params)."""
    metrics, curves = {}, {"rate": {}, "sweep": {}, "lipschitz": {}, "lower_bound": {}, "multiarm": {}}
    ci = dict(n_boot=n_boot, level=level)

    for adv, doc in merge_records(rate_files, "adversary").items():
        recs = doc["records"]
        curves["rate"][adv] = {}
        for alg in doc["params"]["algorithms"]:
            x, _, reg = A.table(recs, "T", {"algorithm": alg})
            curves["rate"][adv][alg] = A.rate_fit(x, reg, **ci)
        lin = curves["rate"][adv]["exp3_linear"]
        metrics.update(rate_metrics("rate", lin, f"_{adv}"))
        metrics[f"rate_log_tol_{adv}"] = 0.0  # O(min{sqrt(K T log N), K sqrt(T)}): no log T factor
        for trivial in ("uniform", "never_pay"):  # the same arrivals as Exp3-linear's, exact expected regret
            x, _, reg = A.table(recs, "T", {"algorithm": "exp3_linear"}, f"regret_{trivial}")
            fit = A.rate_fit(x, reg, **ci)
            curves["rate"][adv][trivial] = fit
            metrics.update(rate_metrics(f"rate_{trivial}", fit, f"_{adv}"))
        lin_recs = [r for r in recs if r["algorithm"] == "exp3_linear"]
        metrics[f"bound_ratio_{adv}"] = A.per_seed_max_ratio(lin_recs, _linear_bound)
        T_max = max(r["T"] for r in recs)
        naive = A.per_seed_at([r for r in recs if r["algorithm"] == "naive_grid"], T_max, lambda r: r["regret"])
        linear = A.per_seed_at(lin_recs, T_max, lambda r: r["regret"])
        metrics[f"naive_excess_{adv}"] = list(np.subtract(naive, linear))
        metrics[f"regret_Tmax_naive_grid_{adv}"], metrics[f"regret_Tmax_exp3_linear_{adv}"] = naive, linear
        for trivial in ("uniform", "never_pay"):
            metrics[f"regret_Tmax_{trivial}_{adv}"] = A.per_seed_at(lin_recs, T_max, lambda r: r[f"regret_{trivial}"])
        metrics.update(rate_metrics("naive", curves["rate"][adv]["naive_grid"], f"_{adv}"))
        curves["rate"][adv]["bound"] = [
            float(np.mean([_linear_bound(r) for r in lin_recs if r["T"] == T])) for T in lin["x"]
        ]

    for dim, doc in merge_records(sweep_files, "dimension").items():
        recs, x_name, p = doc["records"], {"arms": "N", "types": "K"}[dim], {"arms": "n", "types": "k"}[dim]
        T = max(r["T"] for r in recs)
        at_T = [r for r in recs if r["T"] == T]
        curves["sweep"][dim] = {"T": T}
        x, _, reg = A.table(at_T, x_name, {"algorithm": "exp3_linear"}, "regret_uniform")
        uni = A.rate_fit(x, reg, **ci)  # uniform play over the merged candidates, Exp3-linear's arrivals
        curves["sweep"][dim]["uniform"] = uni
        metrics.update(rate_metrics(f"{p}", uni, "_uniform"))
        for alg in doc["params"]["algorithms"]:
            x, _, reg = A.table(at_T, x_name, {"algorithm": alg})
            c = A.rate_fit(x, reg, **ci)
            alg_recs = [r for r in at_T if r["algorithm"] == alg]
            if alg == "exp3_linear":
                theory = A.bound_exponent(
                    alg_recs, x_name, lambda r: np.sqrt(r["rank"] * np.log(max(r["n_actions"], 2)))
                )
            else:
                theory = A.bound_exponent(
                    alg_recs, x_name, lambda r: np.sqrt(r["n_actions"] * np.log(max(r["n_actions"], 2)))
                )
            c["theory"] = theory
            c["n_actions"] = [float(np.mean([r["n_actions"] for r in alg_recs if r[x_name] == v])) for v in c["x"]]
            curves["sweep"][dim][alg] = c
            metrics.update(rate_metrics(p, c, f"_{alg}"))
            metrics[f"{p}_theory_{alg}"] = theory

    for inst, doc in merge_records(lipschitz_files, "instance").items():
        recs, prm = doc["records"], doc["params"]
        x, _, reg = A.table(recs, "T", {"algorithm": "lipschitz"})
        c = A.rate_fit(x, reg, **ci)
        bound = lambda r: A.lipschitz_bound(r["T"], r["n_actions"], prm["n_arms"], prm["lipschitz"])  # noqa: E731
        c["bound"] = [float(np.mean([bound(r) for r in recs if r["T"] == T])) for T in c["x"]]
        curves["lipschitz"][inst] = c
        metrics.update(rate_metrics(inst, c))
        metrics[f"{inst}_bound_ratio"] = A.per_seed_max_ratio(recs, bound)
        # O~((L N)^(1/3) T^(2/3)): hidden log factors, allowance of one log T at the grid's smallest T
        metrics[f"{inst}_log_tol"] = A.log_tolerance(min(x), 1.0)
        for trivial in ("uniform", "never_pay"):
            if f"regret_{trivial}" in recs[0]:
                u = A.rate_fit(*A.table(recs, "T", {"algorithm": "lipschitz"}, f"regret_{trivial}")[::2], **ci)
                c[trivial] = u["mean"]
                metrics.update(rate_metrics(f"{inst}_{trivial}", u))

    doc = merge_records(lower_bound_files)
    recs = doc["records"]
    T_max = max(r["T"] for r in recs)
    for alg in doc["params"]["algorithms"]:
        x, _, reg = A.table(recs, "T", {"algorithm": alg})
        c = A.slope_with_interval(x, reg, **ci)
        curves["lower_bound"][alg] = c
        per_round = A.per_seed_at([r for r in recs if r["algorithm"] == alg], T_max, lambda r: r["regret"] / r["T"])
        metrics.update(
            {
                f"lb_slope_{alg}": c["slope"],
                f"lb_lo_{alg}": c["lo"],
                f"lb_hi_{alg}": c["hi"],
                f"lb_per_round_{alg}": per_round,
            }
        )
    agnostic = [a for a in doc["params"]["algorithms"] if a in AGNOSTIC]
    metrics["lb_per_round_agnostic_best"] = list(np.min([metrics[f"lb_per_round_{a}"] for a in agnostic], axis=0))

    recs = merge_records(multiarm_files)["records"]
    x, _, reg = A.table(recs, "T", {"algorithm": "exp3_linear"})
    c = A.rate_fit(x, reg, **ci)
    T_max = max(r["T"] for r in recs)
    c["gain"] = A.per_seed_at(recs, T_max, lambda r: (r["best_value"] - r["best_single_arm"]) / r["T"])
    metrics.update(rate_metrics("multiarm", c))
    for trivial in ("uniform", "never_pay"):
        u = A.rate_fit(*A.table(recs, "T", {"algorithm": "exp3_linear"}, f"regret_{trivial}")[::2], **ci)
        c[trivial] = u["mean"]
        metrics.update(rate_metrics(f"multiarm_{trivial}", u))
    curves["multiarm"] = c
    metrics.update(
        {
            "multiarm_bound_ratio": A.per_seed_max_ratio(recs, _linear_bound),
            "multiarm_gain": c["gain"],
            # O~(K sqrt(T log(K T))): a factor (log T)^(1/2), its allowance at the grid's smallest T
            "multiarm_log_tol": A.log_tolerance(min(x), 0.5),
        }
    )
    metrics.update(_per_seed(two_point_files, two_point_metrics))
    metrics.update(_per_seed(hidden_subset_files, hidden_subset_metrics))
    metrics.update(_per_seed(zooming_files, zooming_metrics))
    write_json(out_json, {"metrics": metrics, "curves": curves, "level": level, "n_boot": n_boot})
    log(f"{len(metrics)} metrics -> {out_json}")
