"""principal_agent lower bound, K and N dependence: the hidden-subset family and its regret
against min{sqrt(K T log N), K sqrt(T)}."""

import itertools

import numpy as np
import pytest

from methods.principal_agent import candidates as C
from methods.principal_agent.lower_bound_kn import (
    balanced_subsets,
    hidden_type_probabilities,
    kn_grid_experiment,
    paper_bound,
    subset_instance,
    undominated,
)
from methods.principal_agent.model import greedy_response, greedy_utility, single_arm_incentives


def test_serving_incentive_moves_exactly_its_subset():
    delta = 0.05
    inst, subsets = subset_instance(4, 5, delta, np.random.default_rng(0))
    for i, S in enumerate(subsets, start=1):
        arms = greedy_response(inst, single_arm_incentives([i], [delta], 5))[0]
        assert sorted(np.nonzero(arms == i)[0].tolist()) == sorted(S)
        assert np.all(arms[[j for j in range(4) if j not in S]] == 0)


def test_candidates_are_the_subsets_and_dominate_a_fine_grid():
    K, N = 4, 8
    inst, subsets = subset_instance(K, N, 0.05, np.random.default_rng(1))
    table = undominated(greedy_utility(inst, C.known_greedy_candidates(inst, merge=True)))
    M = min(N - 1, len(list(itertools.combinations(range(K), K // 2))))
    assert len(table) == M
    got = sorted(tuple(np.nonzero(row > 0)[0]) for row in table)
    assert got == sorted(set(tuple(sorted(S)) for S in subsets))
    # no single-arm incentive of a fine grid beats every candidate on a type-by-type basis
    grid = greedy_utility(inst, C.uniform_grid(N, 0.01))
    for row in grid:
        assert np.any(np.all(table >= row - 1e-12, axis=1))


def test_balanced_subsets_distinct_then_cyclic_and_odd_K_rejected():
    s = balanced_subsets(4, 8, np.random.default_rng(0))
    assert len(set(s[:6])) == 6 and s[6:] == s[:2]
    with pytest.raises(ValueError, match="even"):
        balanced_subsets(3, 2, np.random.default_rng(0))


def test_hidden_probabilities_sum_to_one_and_favour_the_hidden_subset():
    table = np.array([[0.45, 0.45, 0, 0], [0, 0.45, 0.45, 0], [0, 0, 0.45, 0.45]])
    q = hidden_type_probabilities(table, np.array([0, 2]), 0.1)
    assert q.sum(axis=1) == pytest.approx([1.0, 1.0])
    mean = q @ table.T
    assert mean.argmax(axis=1).tolist() == [0, 2]
    # gap of the complement subset: (1/2 - delta) * eps exactly
    assert mean[0, 0] - mean[0, 2] == pytest.approx(0.45 * 0.1)


def test_paper_bound_regimes():
    assert paper_bound(2, 64, 100) == pytest.approx(2 * 10)  # K sqrt(T) when log N > K
    assert paper_bound(8, 4, 100) == pytest.approx(np.sqrt(8 * 100 * np.log(4)))


def test_regret_grows_with_the_bound_on_a_small_grid():
    out = kn_grid_experiment([2, 8], [4, 32], horizon=400, n_runs=20, c=0.5, delta=0.05, seed=0)
    reg = {(r["K"], r["N"]): r["regret"] for r in out["rows"]}
    assert reg[(8, 32)] > reg[(2, 4)]
    assert out["slope_on_bound"] > 0.5
