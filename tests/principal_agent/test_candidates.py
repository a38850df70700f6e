"""The candidate sets contain a best fixed incentive (brute force); merging keeps dominance; grids."""

import numpy as np
import pytest

from methods.principal_agent import candidates as C
from methods.principal_agent.model import greedy_utility, random_instance, single_arm_incentives


def _brute_force_single_arm(inst, counts, n_grid=2001):
    xs = np.linspace(0, 1, n_grid)
    pi = single_arm_incentives(np.repeat(np.arange(inst.n_arms), n_grid), np.tile(xs, inst.n_arms), inst.n_arms)
    return float((greedy_utility(inst, pi) @ counts).max())


@pytest.mark.parametrize("K, N", [(2, 3), (3, 4), (4, 5)])
def test_candidates_contain_an_optimal_fixed_incentive(K, N):
    rng = np.random.default_rng(K * 10 + N)
    for _ in range(10):
        inst = random_instance(rng, K, N)
        counts = rng.integers(0, 100, size=K).astype(float)
        best = float((greedy_utility(inst, C.known_greedy_candidates(inst)) @ counts).max())
        raw = float((greedy_utility(inst, C.known_greedy_candidates(inst, merge=False)) @ counts).max())
        grid = _brute_force_single_arm(inst, counts)
        assert best == pytest.approx(raw, abs=1e-9)  # merging loses nothing
        assert best >= grid - 1e-9  # no grid incentive beats the candidates
        assert best - grid <= counts.sum() / 2000 + 1e-9  # and the grid gets within its resolution


def test_every_single_arm_incentive_is_dominated_by_a_merged_candidate():
    rng = np.random.default_rng(3)
    inst = random_instance(rng, 4, 6)
    z_cand = greedy_utility(inst, C.known_greedy_candidates(inst))
    pi = single_arm_incentives(rng.integers(0, 6, 500), rng.uniform(size=500), 6)
    z = greedy_utility(inst, pi)
    dominated = (z_cand[None, :, :] >= z[:, None, :] - 1e-12).all(axis=2).any(axis=1)
    assert dominated.all()


@pytest.mark.parametrize("K, N", [(2, 10), (4, 3), (8, 50)])
def test_merged_set_size_bound(K, N):
    inst = random_instance(np.random.default_rng(K + N), K, N)
    assert len(C.known_greedy_candidates(inst, merge=False)) == K * N + 1
    assert len(C.known_greedy_candidates(inst)) <= min(K * N, 2**K) + 1


def test_general_candidates_beat_every_grid_incentive_and_the_single_arm_optimum():
    rng = np.random.default_rng(4)
    g = np.linspace(0, 1, 26)
    grid = np.stack(np.meshgrid(g, g, g, indexing="ij"), axis=-1).reshape(-1, 3)
    for _ in range(5):
        inst = random_instance(rng, 2, 3)
        counts = rng.integers(1, 100, size=2).astype(float)
        general = float((greedy_utility(inst, C.general_candidates(inst)) @ counts).max())
        single = float((greedy_utility(inst, C.known_greedy_candidates(inst)) @ counts).max())
        assert general >= float((greedy_utility(inst, grid) @ counts).max()) - 1e-9
        assert general >= single - 1e-9


def test_grids_and_the_tuned_step():
    assert len(C.uniform_grid(5, 0.1)) == 5 * 10 + 1
    assert len(C.uniform_grid(3, 1.0)) == 3 + 1
    eps = C.lipschitz_step(10, 2.0, 1000)
    assert eps == pytest.approx(10 ** (1 / 3) * 5 ** (-2 / 3) / 10)
    # eps balances the discretisation error T (2L+1) eps with sqrt(T N / eps) (equal up to the constant)
    T, L, N = 10**5, 3.0, 20
    e = C.lipschitz_step(N, L, T)
    assert T * (2 * L + 1) * e == pytest.approx(np.sqrt(T * N / e))
