"""Slopes and intervals on exact power laws; bound exponents; the end-to-end steps at a toy size."""

import numpy as np
import pytest

from methods.common.claims import load_declaration
from methods.common.io import read_json
from methods.principal_agent import analysis as A
from methods.principal_agent import claims as CL
from methods.principal_agent import figures as F
from methods.principal_agent import jobs as J
from methods.principal_agent import summary as S
from methods.principal_agent.lower_bound_kn import hidden_subset_job
from methods.principal_agent.lower_bound_known import two_point_job
from methods.principal_agent.zooming import zooming_job


def test_slope_of_an_exact_power_law_and_its_interval():
    x = np.array([1e3, 1e4, 1e5])
    per_seed = np.array([[c * t**0.5 for t in x] for c in (1.0, 1.5, 2.0, 3.0)])
    out = A.slope_with_interval(x, per_seed, n_boot=200, level=0.95)
    assert out["slope"] == pytest.approx(0.5)
    assert out["lo"] == pytest.approx(0.5) and out["hi"] == pytest.approx(0.5)


def test_slope_is_nan_when_a_regret_is_not_positive():
    assert np.isnan(A.loglog_slope(np.array([1.0, 10.0]), np.array([1.0, -2.0])))


def test_bound_exponent_of_sqrt_n():
    recs = [{"N": n, "value": np.sqrt(n)} for n in (10, 50, 200)]
    assert A.bound_exponent(recs, "N", lambda r: r["value"]) == pytest.approx(0.5)


def test_the_dag_steps_end_to_end(tmp_path):
    """Every step of the DAG at a toy size, then the claims document validates."""
    adv = {"block_length": 20, "period": 3, "adaptive_prob": 0.5}
    seeds, Ts = [0, 1], [60, 120]
    rate = []
    for a in ("blocked", "adaptive"):
        rate.append(str(tmp_path / f"rate_{a}.json"))
        J.run_rate(a, ["exp3_linear", "naive_grid"], 4, 2, Ts, seeds, adv, rate[-1])
    sweep_algs = ["exp3_linear", "exp3_candidates", "exp3_merged"]
    J.run_sweep("arms", sweep_algs, [3, 6], 4, 2, [120], seeds, "random", adv, str(tmp_path / "arms.json"))
    J.run_sweep("types", sweep_algs, [2, 3], 4, 2, [120], seeds, "random", adv, str(tmp_path / "types.json"))
    logit = {"adversary": "blocked", "n_types": 2, "temperature": 0.25}
    needle = {"lipschitz": 4.0, "width_factor": 1.0, "base_prob": 0.5}
    for inst in ("logit", "needle"):
        J.run_lipschitz(inst, Ts, seeds, 4, logit, needle, adv, str(tmp_path / f"{inst}.json"))
    J.run_lower_bound(
        "blocked", ["naive_grid", "exp3_linear"], Ts, seeds, 1e-9, [0.3, 0.7], adv, str(tmp_path / "lb.json")
    )
    J.run_multiarm("random", Ts, seeds, 3, 2, adv, str(tmp_path / "multi.json"))
    two_point_job(
        {"horizons": [50, 200], "n_runs": 5, "c": 0.5, "delta": 0.05, "algorithms": ["exp3_linear"]},
        seeds,
        str(tmp_path / "two_point.json"),
    )
    hidden_subset_job(
        {"types": [2, 4], "arms": [4, 8], "horizon": 100, "n_runs": 4, "c": 0.5, "delta": 0.05},
        seeds,
        str(tmp_path / "hidden.json"),
    )
    zooming_job(
        {
            "n_types": 2,
            "n_arms": 2,
            "horizons": [60, 120],
            "n_runs": 1,
            "temperature": 0.5,
            "split_constant": 1.0,
            "adaptive_prob": 0.5,
            "grid_points": 5,
        },
        seeds,
        str(tmp_path / "zoom.json"),
    )
    moved = [[str(tmp_path / f)] for f in ("two_point.json", "hidden.json", "zoom.json")]
    S.analyse(
        rate,
        [str(tmp_path / "arms.json"), str(tmp_path / "types.json")],
        [str(tmp_path / "logit.json"), str(tmp_path / "needle.json")],
        [str(tmp_path / "lb.json")],
        [str(tmp_path / "multi.json")],
        *moved,
        20,
        0.95,
        str(tmp_path / "summary.json"),
    )
    names = ("rate", "sweep", "lip", "lb", "two_point", "hidden", "zoom")
    pngs = [str(tmp_path / f"{n}.png") for n in names]
    F.make_figures(str(tmp_path / "summary.json"), *moved, pngs[0], str(tmp_path / "rate.csv"), *pngs[1:])
    CL.write_paper_claims(
        str(tmp_path / "summary.json"),
        "smoke",
        ["blocked", "adaptive"],
        ["naive_grid", "exp3_linear"],
        ["exp3_linear"],
        str(tmp_path / "claims.json"),
        str(tmp_path / "metrics_summary.json"),
    )
    doc = read_json(tmp_path / "claims.json")
    assert read_json(tmp_path / "metrics_summary.json") == read_json(tmp_path / "summary.json")["metrics"]
    # three templates expand over the two adversaries (+3), the lower-bound one over its one agnostic learner,
    # the two-point one over its one learner
    assert len(doc["claims"]) == len(load_declaration(CL.DECLARATION)["claims"]) + 3
    assert {c["verdict"] for c in doc["claims"]} <= {"reproduced", "not_reproduced", "inconclusive", "passed", "failed"}
    headline = [c for c in doc["claims"] if c["kind"] == "headline"]
    assert all(c["nulls"] and c["strongest_null"] in {n["name"] for n in c["nulls"]} for c in headline)
    # every rate claim has the trivial policies among its nulls
    for c in headline:
        if c["id"].startswith(("greedy_rate_", "multiarm_rate", "lipschitz_rate")):
            assert {"uniform_play", "never_pay"} <= {n["name"] for n in c["nulls"] if n["kind"] == "trivial"}
    assert all((tmp_path / f"{n}.png").stat().st_size > 1000 for n in names)
    header = (tmp_path / "rate.csv").read_text().splitlines()[0].split(",")
    assert header[0] == "T" and {"exp3_linear_blocked", "naive_grid_adaptive", "bound_blocked"} <= set(header)


def test_one_job_per_seed_group_gives_the_summary_of_one_job_over_all_seeds(tmp_path):
    """Seeds as wildcards: the per-seed documents merged in seed order are those of one job over all seeds
    (the {"runs"} steps); the record steps of single seeds concatenate their records and join their seeds."""
    params = {"horizons": [50, 200], "n_runs": 3, "c": 0.5, "delta": 0.05, "algorithms": ["exp3_linear"]}
    two_point_job(params, [0, 1], str(tmp_path / "all.json"))
    for s in (0, 1):
        two_point_job(params, [s], str(tmp_path / f"seed{s}.json"))
    merged = S.merge_runs([str(tmp_path / "seed0.json"), str(tmp_path / "seed1.json")])
    assert merged == read_json(tmp_path / "all.json")["runs"]
    adv = {"block_length": 20, "period": 3, "adaptive_prob": 0.5}
    for s in (0, 1):
        out = str(tmp_path / f"rate_seed{s}.json")
        J.run_rate("blocked", ["exp3_linear"], 3, 2, [60], [s], adv, out, group=f"seed{s}")
    merged = S.merge_records([str(tmp_path / f"rate_seed{s}.json") for s in (0, 1)], "adversary")["blocked"]
    assert merged["params"]["seeds"] == [0, 1] and [r["seed"] for r in merged["records"]] == [0, 1]


def test_a_single_seed_group_draws_its_own_streams():
    """The tiny scale's one job over all seeds keeps its stream keys; one-seed jobs (paper scale) get their own."""
    assert J._key("rate/blocked") == J._key("rate/blocked", "all")
    assert len({J._key("rate/blocked", g) for g in ("all", "seed0", "seed1")}) == 3


def test_uniform_play_meets_the_lower_bound_criteria_so_those_claims_cannot_reproduce(tmp_path):
    """The lower-bound families' criteria hold for a learner that learns nothing (their nulls)."""
    two_point_job(
        {"horizons": [250, 1000, 4000], "n_runs": 2, "c": 0.5, "delta": 0.05, "algorithms": ["exp3_linear"]},
        [0],
        str(tmp_path / "tp.json"),
    )
    m = S.two_point_metrics(read_json(tmp_path / "tp.json")["runs"][0])
    # uniform play over {zero incentive, two serving incentives}: T times a mean gap that tends to a constant
    assert m["two_point_slope_uniform"] > 0.9 and m["two_point_norm_ratio_uniform"] > 1.0


def test_uniform_play_value_is_the_mean_over_each_runs_own_actions():
    from methods.principal_agent.experiments import uniform_play_value

    tables = [np.array([[1.0, 0.0], [0.5, 0.5]]), np.array([[0.3, 0.1, 0.2]])]
    counts = np.array([[2, 4], [10, 0]])
    assert uniform_play_value(tables, counts) == pytest.approx([2 * 0.5 + 4 * 0.5, 10 * 0.2])


def test_rate_fit_records_each_seed_and_every_left_out_grid_point():
    """rate_fit: per-seed slopes of exact power laws, leave-one-out slopes equal to the exponent, and the
    left-out intervals' ends bracket the whole-grid interval's."""
    x = np.array([10.0, 100.0, 1000.0, 10000.0])
    per_seed = np.array([c * x**0.5 for c in (1.0, 2.0, 3.0)])
    fit = A.rate_fit(x, per_seed, n_boot=50, level=0.95)
    assert fit["seeds"] == pytest.approx([0.5, 0.5, 0.5])
    assert fit["loo_min"] == pytest.approx(0.5) and fit["loo_max"] == pytest.approx(0.5)
    noisy = per_seed * np.array([[1.0, 1.3, 0.9, 1.1], [1.2, 0.8, 1.0, 1.0], [0.9, 1.0, 1.2, 0.95]])
    fit = A.rate_fit(x, noisy, n_boot=200, level=0.95)
    assert fit["loo_min"] <= fit["loo_max"] and len(fit["seeds"]) == 3
    assert fit["loo_lo_max"] >= min(fit["lo"], fit["loo_lo_max"]) and np.isfinite(fit["loo_hi_min"])
    assert A.log_tolerance(1000.0, 1.0) == pytest.approx(1 / np.log(1000.0))


def test_trivial_regrets_are_exact_on_the_learners_arrivals():
    """Never paying books sum_j n_j U(0, j); uniform play the mean over the merged candidates; both regrets
    are against the same comparator as the learner's, so never paying is 0 where incentive 0 is optimal."""
    from methods.principal_agent import candidates as C
    from methods.principal_agent.experiments import Run, trivial_regrets, uniform_play_value
    from methods.principal_agent.model import greedy_utility, random_instance

    inst = random_instance(np.random.default_rng(3), 3, 4)
    table = greedy_utility(inst, C.known_greedy_candidates(inst, merge=True)).T  # (K, M)
    run = Run(inst, 4, 3, 100, 0, table)
    counts = np.array([[30, 50, 20]])
    best = (counts @ table).max(axis=1).astype(float)
    out = trivial_regrets([run], counts, best)
    zero = greedy_utility(inst, np.zeros((1, 4)))[0]
    assert out["regret_never_pay"][0] == pytest.approx(best[0] - counts[0] @ zero)
    assert out["regret_uniform"][0] == pytest.approx(best[0] - uniform_play_value([table], counts)[0])
    assert out["regret_never_pay"][0] >= -1e-9 and out["regret_uniform"][0] >= -1e-9
