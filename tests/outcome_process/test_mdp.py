"""Exact evaluation and planning against Monte Carlo and brute force."""

import itertools

import numpy as np
import pytest

from methods.outcome_process.mdp import (
    chain_mdp,
    evaluate_policy,
    fork_mdp,
    monte_carlo_value,
    occupancy,
    one_hot,
    optimal_value,
    plan,
    policy_value,
    sample_trajectories,
    stochastic_mdp,
    tree_mdp,
    uniform_policy,
)


def _mdps(rng):
    return [tree_mdp(4, 2, rng), chain_mdp(5, 4, 2, rng), stochastic_mdp(4, 3, 3, 0.7, rng), fork_mdp(4, 1.0, 0.6)]


@pytest.mark.parametrize("k", range(4))
def test_exact_value_matches_monte_carlo(k):
    rng = np.random.default_rng(k)
    mdp = _mdps(rng)[k]
    pi = rng.dirichlet(np.ones(mdp.A), size=(mdp.H, mdp.S))
    mc, se = monte_carlo_value(mdp, pi, 40000, rng)
    assert abs(policy_value(mdp, pi) - mc) < 5 * se + 1e-9


def test_occupancy_sums_to_one_and_matches_samples():
    rng = np.random.default_rng(1)
    mdp = stochastic_mdp(4, 3, 2, 0.5, rng)
    pi = uniform_policy(mdp)
    d = occupancy(mdp, pi)
    assert np.allclose(d.sum((1, 2)), 1.0)
    states, actions, _ = sample_trajectories(mdp, pi, 50000, rng)
    for h in range(mdp.H):
        emp = np.bincount(states[:, h] * mdp.A + actions[:, h], minlength=mdp.S * mdp.A) / len(states)
        assert np.abs(emp - d[h].ravel()).max() < 0.01


def test_planning_matches_brute_force_on_a_deterministic_chain():
    rng = np.random.default_rng(2)
    mdp = chain_mdp(4, 2, 2, rng)
    best = max(
        policy_value(mdp, one_hot(np.array(acts)[:, None].repeat(mdp.S, 1), mdp.A))
        for acts in itertools.product(range(mdp.A), repeat=mdp.H)
    )
    assert np.isclose(optimal_value(mdp), best)


def test_value_of_the_planned_policy_is_the_planned_value():
    rng = np.random.default_rng(3)
    mdp = stochastic_mdp(5, 4, 3, 0.5, rng)
    pi, _, V = plan(mdp)
    _, V_eval = evaluate_policy(mdp, one_hot(pi, mdp.A))
    assert np.allclose(V, V_eval)


def test_fork_optimum_is_the_early_branch():
    mdp = fork_mdp(5, 1.0, 0.6)
    pi, _, V = plan(mdp)
    assert pi[0, 0] == 0 and np.isclose(V[0, 0], 1.0)
