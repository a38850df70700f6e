"""principal_agent lower bound for known greedy responses: the two-type construction and the
T-rate of the regret on the two-point family."""

import numpy as np
import pytest

from methods.principal_agent import candidates as C
from methods.principal_agent.lower_bound_known import (
    lower_bound_experiment,
    pseudo_regret,
    two_type_instance,
    type_probabilities,
)
from methods.principal_agent.model import greedy_response, greedy_utility, single_arm_incentives


def test_each_serving_incentive_moves_exactly_its_type():
    delta = 0.05
    inst = two_type_instance(delta)
    pi = single_arm_incentives([0, 1, 2], [0.0, delta, delta], 3)
    assert greedy_response(inst, pi).tolist() == [[0, 0], [1, 0], [0, 2]]
    assert greedy_utility(inst, pi) == pytest.approx(np.array([[0, 0], [0.5 - delta, 0], [0, 0.5 - delta]]))


def test_no_single_arm_incentive_serves_both_types_at_a_profit():
    inst = two_type_instance(0.05)
    grid = C.uniform_grid(3, 0.01)
    u = greedy_utility(inst, grid)  # (M, 2)
    assert not np.any((u[:, 0] > 1e-12) & (u[:, 1] > 1e-12))
    # and the merged candidates attain the best utility of every type
    cand = greedy_utility(inst, C.known_greedy_candidates(inst, merge=True))
    assert cand.max(axis=0) == pytest.approx(u.max(axis=0))


def test_pseudo_regret_is_zero_for_a_learner_without_choice():
    table = np.array([[0.45], [0.45]])  # one candidate: no regret possible
    r = pseudo_regret("exp3_merged", table, type_probabilities(1, 0.1), 50, 4, np.random.default_rng(0))
    assert r == pytest.approx(np.zeros(4))


def test_regret_grows_at_the_lower_bounds_rate_on_a_small_grid():
    out = lower_bound_experiment([100, 400, 1600], n_runs=30, c=0.5, delta=0.05, algorithms=["exp3_linear"], seed=0)
    r = out["algorithms"]["exp3_linear"]
    assert r["slope"] >= 0.4  # at least sqrt(T)
    assert r["slope"] <= 0.75  # and no faster than the upper bound's T^(1/2) plus the transient
    norm = r["regret_over_sqrt_T"]
    assert norm[-1] >= 0.8 * norm[0]
