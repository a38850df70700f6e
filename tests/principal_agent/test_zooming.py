"""principal_agent smooth general incentives: the zooming learner's partition and regret bookkeeping."""

import numpy as np
import pytest

from methods.principal_agent.model import Instance
from methods.principal_agent.zooming import (
    ZoomingLearner,
    grid_depth,
    hindsight_grid,
    rate_exponent,
    run_once,
    utilities,
    zooming_experiment,
)


def test_split_keeps_the_parents_probability_and_tiles_the_cube():
    z = ZoomingLearner(2, lipschitz=2.0, split_constant=1.0)
    z.S[:] = [0.0]
    p_before = z.probs()
    z._split(0)
    z.t -= 1  # probs() advances t; compare at the same eta
    p_after = z.probs()
    assert p_after.sum() == pytest.approx(1.0) and len(p_after) == 4
    assert p_after == pytest.approx(np.full(4, p_before[0] / 4))
    assert z.side.tolist() == [0.5] * 4
    assert sorted(map(tuple, z.lower.tolist())) == [(0, 0), (0, 0.5), (0.5, 0), (0.5, 0.5)]


def test_partition_refines_where_the_utility_concentrates():
    # one type; arm 0 pays the principal 1, arm 1 pays 0: good incentives push towards arm 0 cheaply
    # (small x_0, x_1 = 0); incentives with large x_1 are the worst (they buy arm 1 and pay for it)
    inst = Instance(mu=np.array([[0.5, 0.5]]), v=np.array([1.0, 0.0]))
    grid = hindsight_grid(2, 21)
    gu = utilities(inst, grid, 0.1)
    best, worst = grid[gu[:, 0].argmax()], grid[gu[:, 0].argmin()]
    out = run_once(inst, [4000], 0.1, 1.0, None, 0.0, gu, np.random.default_rng(0))
    learner = out["learner"]
    assert learner.depth_at(best) >= learner.depth_at(worst) + 2
    # and it earns more than uniform play over the cube would
    mean_u = utilities(inst, np.random.default_rng(2).uniform(size=(20000, 2)), 0.1).mean()
    assert out["regret"][0] < 0.9 * 4000 * (gu.max() - mean_u)


def test_regret_bookkeeping_against_a_fixed_learner():
    # a uniform partition of one cell at depth 0 draws incentives uniformly: regret = T * (best - mean) on average
    inst = Instance(mu=np.array([[0.5, 0.5]]), v=np.array([1.0, 0.0]))
    grid = hindsight_grid(2, 21)
    gu = utilities(inst, grid, 0.5)
    out = run_once(inst, [2000], 0.5, 1.0, 0, 0.0, gu, np.random.default_rng(1))
    mean_u = utilities(inst, np.random.default_rng(2).uniform(size=(20000, 2)), 0.5).mean()
    assert out["regret"][0] == pytest.approx(2000 * (gu.max() - mean_u), rel=0.05)


def test_rate_and_grid_depth():
    assert rate_exponent(2) == pytest.approx(0.75)
    assert grid_depth(2, 4096) == 3


def test_experiment_shapes():
    out = zooming_experiment(2, 2, [50, 100], 1, 0.5, 1.0, 0.5, 5, 0)
    for r in out["learners"].values():
        assert len(r["regret"]) == 2 and np.isfinite(r["slope"])
