"""What each step of the principal_agent DAG does (workflow/rules/principal_agent.smk); one function per script.

Simulation steps write {"params": ..., "records": [...]} (one record per algorithm, N, K, T, seed);
`analyse` turns them into rates, intervals and bound ratios (summary.json), `make_figures` draws
them, `write_paper_claims` computes the verdicts. The lower-bound families for known responses
(two_point: the T-dependence; hidden_subset: the K and N dependence) and the zooming learner for
smooth general incentives write {"seeds": [...], "runs": [one document per seed]}; `analyse` reads
their per-seed metrics too.
"""
from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, read_json, write_json

from . import analysis as A
from . import experiments as E
from . import figures as F

DECLARATION = Path(__file__).with_name("claims.yaml")
AGNOSTIC = ("naive_grid", "lipschitz")  # lower-bound learners that do not use the responses


def _key(name: str) -> int:
    """A stable random-stream key per job (the same config gives the same numbers)."""
    return zlib.crc32(name.encode())


def _write(out_json, params: dict, records: list[dict]) -> None:
    write_json(out_json, {"params": params, "records": records})
    log(f"{len(records)} records -> {out_json}")


# --- simulation steps -----------------------------------------------------------------------------

def run_rate(adversary: str, algorithms: list[str], n_arms: int, n_types: int, horizons: list[int],
             seeds: list[int], adversary_params: dict, out_json: str) -> None:
    """Known greedy responses, single-arm incentives: regret vs T under one adversary."""
    settings = [(n_arms, n_types, int(T)) for T in horizons]
    records = E.run_greedy(adversary, algorithms, settings, seeds, adversary_params, _key(f"rate/{adversary}"))
    _write(out_json, {"adversary": adversary, "algorithms": algorithms, "n_arms": n_arms, "n_types": n_types,
                      "horizons": horizons, "seeds": seeds, "adversary_params": adversary_params}, records)


def run_sweep(dimension: str, algorithms: list[str], values: list[int], n_arms: int, n_types: int,
              horizons: list[int], seeds: list[int], adversary: str, adversary_params: dict, out_json: str) -> None:
    """Regret vs N (dimension 'arms', K = n_types) or vs K (dimension 'types', N = n_arms)."""
    if dimension == "arms":
        settings = [(int(N), n_types, int(T)) for N in values for T in horizons]
    elif dimension == "types":
        settings = [(n_arms, int(K), int(T)) for K in values for T in horizons]
    else:
        raise ValueError(f"sweep dimension {dimension!r} unknown; use 'arms' or 'types'")
    records = E.run_greedy(adversary, algorithms, settings, seeds, adversary_params, _key(f"sweep/{dimension}"))
    _write(out_json, {"dimension": dimension, "values": values, "algorithms": algorithms, "n_arms": n_arms,
                      "n_types": n_types, "horizons": horizons, "seeds": seeds, "adversary": adversary}, records)


def run_lipschitz(instance: str, horizons: list[int], seeds: list[int], n_arms: int, logit: dict, needle: dict,
                  adversary_params: dict, out_json: str) -> None:
    """Smooth responses: Tsallis-INF on the eps-grid against logit agents or the needle family."""
    if instance == "logit":
        records = E.run_logit(logit["adversary"], horizons, seeds, n_arms, logit["n_types"], logit["temperature"],
                              adversary_params, _key("lipschitz/logit"))
        L = 1.0 / logit["temperature"]
    elif instance == "needle":
        records = E.run_needle(horizons, seeds, n_arms, needle["lipschitz"], needle["width_factor"],
                               needle["base_prob"], _key("lipschitz/needle"))
        L = needle["lipschitz"]
    else:
        raise ValueError(f"lipschitz instance {instance!r} unknown; use 'logit' or 'needle'")
    _write(out_json, {"instance": instance, "lipschitz": L, "n_arms": n_arms, "horizons": horizons,
                      "seeds": seeds, "logit": logit, "needle": needle}, records)


def run_lower_bound(adversary: str, algorithms: list[str], horizons: list[int], seeds: list[int], window: float,
                    threshold_range: list[float], adversary_params: dict, out_json: str) -> None:
    """Unknown greedy responses: the Theorem 2.1 instance."""
    records = E.run_lower_bound(adversary, algorithms, horizons, seeds, window, threshold_range, adversary_params,
                                _key("lower_bound"))
    _write(out_json, {"adversary": adversary, "algorithms": algorithms, "horizons": horizons, "seeds": seeds,
                      "window": window, "threshold_range": threshold_range}, records)


def run_multiarm(adversary: str, horizons: list[int], seeds: list[int], n_arms: int, n_types: int,
                 adversary_params: dict, out_json: str) -> None:
    """Known greedy responses, general (multi-arm) incentives."""
    records = E.run_multiarm(adversary, horizons, seeds, n_arms, n_types, adversary_params, _key("multiarm"))
    _write(out_json, {"adversary": adversary, "horizons": horizons, "seeds": seeds, "n_arms": n_arms,
                      "n_types": n_types}, records)


# --- analysis -------------------------------------------------------------------------------------

def _records(path) -> list[dict]:
    return read_json(path)["records"]


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
    return {f"hidden_subset_{k}": doc[k] for k in ("slope_on_bound", "ratio_spread", "ratio_min", "ratio_max",
                                                   "slope_on_bound_uniform", "ratio_spread_uniform")}


def zooming_metrics(doc: dict) -> dict:
    """Per-seed metrics of the smooth general-incentive experiment (zooming, uniform grid, uniform play)."""
    L = doc["learners"]
    return {"zoom_slope": L["zooming"]["slope"], "zoom_rate": doc["rate_exponent"],
            "zoom_regret_min": L["zooming"]["regret_min"], "zoom_grid_slope": L["uniform_grid"]["slope"],
            "zoom_uniform_slope": L["uniform_play"]["slope"], "zoom_uniform_regret_min": L["uniform_play"]["regret_min"]}


def _per_seed(path: str, fn) -> dict:
    """{metric: list over the seeds} from a {"runs": [...]} document."""
    rows = [fn(doc) for doc in read_json(path)["runs"]]
    return {k: [r[k] for r in rows] for k in rows[0]}


def analyse(rate_files: list[str], sweep_files: dict[str, str], lipschitz_files: dict[str, str],
            lower_bound_file: str, multiarm_file: str, two_point_file: str, hidden_subset_file: str,
            zooming_file: str, n_boot: int, level: float, out_json: str) -> None:
    """Slopes with intervals, bound ratios and per-seed comparisons: the flat `metrics` the claims read."""
    metrics, curves = {}, {"rate": {}, "sweep": {}, "lipschitz": {}, "lower_bound": {}, "multiarm": {}}
    ci = dict(n_boot=n_boot, level=level)

    for path in rate_files:
        doc = read_json(path)
        adv, recs = doc["params"]["adversary"], doc["records"]
        curves["rate"][adv] = {}
        for alg in doc["params"]["algorithms"]:
            x, _, reg = A.table(recs, "T", {"algorithm": alg})
            curves["rate"][adv][alg] = A.slope_with_interval(x, reg, **ci)
        lin = curves["rate"][adv]["exp3_linear"]
        metrics.update({f"rate_slope_{adv}": lin["slope"], f"rate_lo_{adv}": lin["lo"], f"rate_hi_{adv}": lin["hi"]})
        lin_recs = [r for r in recs if r["algorithm"] == "exp3_linear"]
        metrics[f"bound_ratio_{adv}"] = A.per_seed_max_ratio(lin_recs, _linear_bound)
        T_max = max(r["T"] for r in recs)
        naive = A.per_seed_at([r for r in recs if r["algorithm"] == "naive_grid"], T_max, lambda r: r["regret"])
        linear = A.per_seed_at(lin_recs, T_max, lambda r: r["regret"])
        metrics[f"naive_excess_{adv}"] = list(np.subtract(naive, linear))
        metrics[f"regret_Tmax_naive_grid_{adv}"], metrics[f"regret_Tmax_exp3_linear_{adv}"] = naive, linear
        grid = curves["rate"][adv]["naive_grid"]
        metrics.update({f"naive_slope_{adv}": grid["slope"], f"naive_lo_{adv}": grid["lo"], f"naive_hi_{adv}": grid["hi"]})
        curves["rate"][adv]["bound"] = [float(np.mean([_linear_bound(r) for r in lin_recs if r["T"] == T])) for T in lin["x"]]

    for dim, path in sweep_files.items():
        doc = read_json(path)
        recs, x_name, p = doc["records"], {"arms": "N", "types": "K"}[dim], {"arms": "n", "types": "k"}[dim]
        T = max(r["T"] for r in recs)
        at_T = [r for r in recs if r["T"] == T]
        curves["sweep"][dim] = {"T": T}
        for alg in doc["params"]["algorithms"]:
            x, _, reg = A.table(at_T, x_name, {"algorithm": alg})
            c = A.slope_with_interval(x, reg, **ci)
            alg_recs = [r for r in at_T if r["algorithm"] == alg]
            if alg == "exp3_linear":
                theory = A.bound_exponent(alg_recs, x_name, lambda r: np.sqrt(r["rank"] * np.log(max(r["n_actions"], 2))))
            else:
                theory = A.bound_exponent(alg_recs, x_name, lambda r: np.sqrt(r["n_actions"] * np.log(max(r["n_actions"], 2))))
            c["theory"] = theory
            c["n_actions"] = [float(np.mean([r["n_actions"] for r in alg_recs if r[x_name] == v])) for v in c["x"]]
            curves["sweep"][dim][alg] = c
            metrics.update({f"{p}_slope_{alg}": c["slope"], f"{p}_lo_{alg}": c["lo"], f"{p}_hi_{alg}": c["hi"],
                            f"{p}_theory_{alg}": theory})

    for inst, path in lipschitz_files.items():
        doc = read_json(path)
        recs, prm = doc["records"], doc["params"]
        x, _, reg = A.table(recs, "T", {"algorithm": "lipschitz"})
        c = A.slope_with_interval(x, reg, **ci)
        bound = lambda r: A.lipschitz_bound(r["T"], r["n_actions"], prm["n_arms"], prm["lipschitz"])  # noqa: E731
        c["bound"] = [float(np.mean([bound(r) for r in recs if r["T"] == T])) for T in c["x"]]
        curves["lipschitz"][inst] = c
        metrics.update({f"{inst}_slope": c["slope"], f"{inst}_lo": c["lo"], f"{inst}_hi": c["hi"],
                        f"{inst}_bound_ratio": A.per_seed_max_ratio(recs, bound)})
        if "regret_uniform" in recs[0]:
            u = A.slope_with_interval(*A.table(recs, "T", {"algorithm": "lipschitz"}, "regret_uniform")[::2], **ci)
            c["uniform"] = u["mean"]
            metrics.update({f"{inst}_uniform_slope": u["slope"], f"{inst}_uniform_lo": u["lo"],
                            f"{inst}_uniform_hi": u["hi"]})

    doc = read_json(lower_bound_file)
    recs = doc["records"]
    T_max = max(r["T"] for r in recs)
    for alg in doc["params"]["algorithms"]:
        x, _, reg = A.table(recs, "T", {"algorithm": alg})
        c = A.slope_with_interval(x, reg, **ci)
        curves["lower_bound"][alg] = c
        per_round = A.per_seed_at([r for r in recs if r["algorithm"] == alg], T_max, lambda r: r["regret"] / r["T"])
        metrics.update({f"lb_slope_{alg}": c["slope"], f"lb_lo_{alg}": c["lo"], f"lb_hi_{alg}": c["hi"],
                        f"lb_per_round_{alg}": per_round})
    agnostic = [a for a in doc["params"]["algorithms"] if a in AGNOSTIC]
    metrics["lb_per_round_agnostic_best"] = list(np.min([metrics[f"lb_per_round_{a}"] for a in agnostic], axis=0))

    recs = _records(multiarm_file)
    x, _, reg = A.table(recs, "T", {"algorithm": "exp3_linear"})
    c = A.slope_with_interval(x, reg, **ci)
    T_max = max(r["T"] for r in recs)
    c["gain"] = A.per_seed_at(recs, T_max, lambda r: (r["best_value"] - r["best_single_arm"]) / r["T"])
    u = A.slope_with_interval(*A.table(recs, "T", {"algorithm": "exp3_linear"}, "regret_uniform")[::2], **ci)
    c["uniform"] = u["mean"]
    curves["multiarm"] = c
    metrics.update({"multiarm_slope": c["slope"], "multiarm_lo": c["lo"], "multiarm_hi": c["hi"],
                    "multiarm_bound_ratio": A.per_seed_max_ratio(recs, _linear_bound),
                    "multiarm_gain": c["gain"], "multiarm_uniform_slope": u["slope"],
                    "multiarm_uniform_lo": u["lo"], "multiarm_uniform_hi": u["hi"]})
    metrics.update(_per_seed(two_point_file, two_point_metrics))
    metrics.update(_per_seed(hidden_subset_file, hidden_subset_metrics))
    metrics.update(_per_seed(zooming_file, zooming_metrics))
    write_json(out_json, {"metrics": metrics, "curves": curves, "level": level, "n_boot": n_boot})
    log(f"{len(metrics)} metrics -> {out_json}")


def make_figures(summary_json: str, two_point_json: str, hidden_subset_json: str, zooming_json: str, rate_png: str,
                 sweep_png: str, lipschitz_png: str, lower_bound_png: str, two_point_png: str, hidden_subset_png: str,
                 zooming_png: str) -> None:
    curves = read_json(summary_json)["curves"]
    F.plot_rates(curves["rate"], rate_png)
    F.plot_sweeps(curves["sweep"], sweep_png)
    F.plot_lipschitz(curves["lipschitz"], lipschitz_png)
    F.plot_lower_bound(curves["lower_bound"], curves["multiarm"], lower_bound_png)
    F.plot_two_point(read_json(two_point_json)["runs"], two_point_png)
    F.plot_hidden_subset(read_json(hidden_subset_json)["runs"], hidden_subset_png)
    F.plot_zooming(read_json(zooming_json)["runs"], zooming_png)


def _nan_for_null(value):
    """JSON has no NaN: a failed measurement was written as null; the claims read it back as NaN (inconclusive)."""
    if isinstance(value, list):
        return [float("nan") if v is None else v for v in value]
    return float("nan") if value is None else value


def write_paper_claims(summary_json: str, scale: str, adversaries: list[str], lb_algorithms: list[str],
                       two_point_algorithms: list[str], claims_path: str) -> None:
    """claims.json: every claim's verdict computed from the summary's metrics by its criterion."""
    metrics = {k: _nan_for_null(v) for k, v in read_json(summary_json)["metrics"].items()}
    doc = evaluate_claims(load_declaration(DECLARATION), metrics, scale,
                          expand_over={"adversary": adversaries,
                                       "lb_algorithm": [a for a in lb_algorithms if a in AGNOSTIC],
                                       "tp_algorithm": list(two_point_algorithms)})
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}")
