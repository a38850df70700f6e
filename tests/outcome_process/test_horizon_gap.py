"""The H-dependence claim reads the horizon sweep correctly: slopes in H of the outcome-to-process
constant, of the trajectory-level learner's constant (its null) and of C_traj."""

import numpy as np
import pytest

from methods.outcome_process.experiments import loglog_slope
from methods.outcome_process.summary import horizon_curves


def _sweep(H, outcome, process, naive, c_traj, seeds=3):
    rep = lambda v: [[float(x)] * seeds for x in v]  # noqa: E731
    return {
        "points": [{"horizon": h, "eps": 1.0} for h in H],
        "subopt": {"outcome": rep(outcome), "process": rep(process), "naive": rep(naive)},
        "coverage": {"c_traj": rep(c_traj)},
    }


def test_slopes_recover_a_polynomial_and_an_exponential_rate():
    H = np.array([5, 6, 7, 8, 9, 10], float)
    process = 0.01 * H
    outcome = process * 3.0 * H**1.5  # ratio 3 H^{3/2}
    naive = process * 2.0**H  # ratio 2^H
    c = horizon_curves(_sweep(H, outcome, process, naive, 2.0**H))
    assert loglog_slope(c["H"], c["ratio"]) == pytest.approx(1.5, abs=1e-9)
    # log-log slope of 2^H over [5, 10]: least squares of H ln 2 on ln H, computed directly
    ref = np.polyfit(np.log(H), H * np.log(2.0), 1)[0]
    assert loglog_slope(c["H"], c["c_traj"]) == pytest.approx(ref, rel=1e-9)
    assert loglog_slope(c["H"], c["naive_ratio"]) == pytest.approx(ref, rel=1e-9)


def test_a_zero_process_error_leaves_the_ratio_undefined_not_infinite():
    H = np.array([5, 6, 7, 8, 9, 10], float)
    c = horizon_curves(_sweep(H, H, np.zeros_like(H), H, 2.0**H))
    assert np.isnan(c["ratio"]).all()
    # fewer than three finite points: no slope, so the claim becomes inconclusive
    assert np.isnan(loglog_slope(c["H"], c["ratio"]))
