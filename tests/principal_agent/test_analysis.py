"""Slopes and intervals on exact power laws; bound exponents; the end-to-end steps at a toy size."""
import numpy as np
import pytest

from methods.common.claims import load_declaration
from methods.common.io import read_json
from methods.principal_agent import analysis as A
from methods.principal_agent import pipeline as P


def test_slope_of_an_exact_power_law_and_its_interval():
    x = np.array([1e3, 1e4, 1e5])
    per_seed = np.array([[c * t ** 0.5 for t in x] for c in (1.0, 1.5, 2.0, 3.0)])
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
        P.run_rate(a, ["exp3_linear", "naive_grid"], 4, 2, Ts, seeds, adv, rate[-1])
    P.run_sweep("arms", ["exp3_linear", "exp3_candidates"], [3, 6], 4, 2, [120], seeds, "random", adv, str(tmp_path / "arms.json"))
    P.run_sweep("types", ["exp3_linear", "exp3_candidates"], [2, 3], 4, 2, [120], seeds, "random", adv, str(tmp_path / "types.json"))
    logit = {"adversary": "blocked", "n_types": 2, "temperature": 0.25}
    needle = {"lipschitz": 4.0, "width_factor": 1.0, "base_prob": 0.5}
    for inst in ("logit", "needle"):
        P.run_lipschitz(inst, Ts, seeds, 4, logit, needle, adv, str(tmp_path / f"{inst}.json"))
    P.run_lower_bound("blocked", ["naive_grid", "exp3_linear"], Ts, seeds, 1e-9, [0.3, 0.7], adv, str(tmp_path / "lb.json"))
    P.run_multiarm("random", Ts, seeds, 3, 2, adv, str(tmp_path / "multi.json"))
    P.analyse(rate, {"arms": str(tmp_path / "arms.json"), "types": str(tmp_path / "types.json")},
              {"logit": str(tmp_path / "logit.json"), "needle": str(tmp_path / "needle.json")},
              str(tmp_path / "lb.json"), str(tmp_path / "multi.json"), 20, 0.95, str(tmp_path / "summary.json"))
    pngs = [str(tmp_path / f"{n}.png") for n in ("rate", "sweep", "lip", "lb")]
    P.make_figures(str(tmp_path / "summary.json"), *pngs)
    P.write_paper_claims(str(tmp_path / "summary.json"), "smoke", ["blocked", "adaptive"], ["naive_grid", "exp3_linear"],
                         str(tmp_path / "claims.json"))
    doc = read_json(tmp_path / "claims.json")
    # three templates expand over the two adversaries (+3), the lower-bound one over its one agnostic learner
    assert len(doc["claims"]) == len(load_declaration(P.DECLARATION)["claims"]) + 3
    assert {c["verdict"] for c in doc["claims"]} <= {"reproduced", "not_reproduced", "inconclusive"}
    assert all((tmp_path / f"{n}.png").stat().st_size > 1000 for n in ("rate", "sweep", "lip", "lb"))
