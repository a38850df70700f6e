"""The advantage as process reward: telescoping, optimality; Q^mu's failure on the fork."""

import numpy as np
import pytest

from methods.outcome_process.coverage import behaviour_policy
from methods.outcome_process.mdp import (
    chain_mdp,
    fork_mdp,
    policy_value,
    sample_trajectories,
    stochastic_mdp,
    suboptimality,
    tree_mdp,
    uniform_policy,
)
from methods.outcome_process.prm import advantage, advantage_telescoping_gap, prm_policies, rollout_q


@pytest.mark.parametrize(
    "make", [lambda r: tree_mdp(5, 2, r), lambda r: chain_mdp(6, 3, 2, r), lambda r: fork_mdp(5, 1.0, 0.6)]
)
def test_telescoping_on_deterministic_mdps(make):
    """sum_h A^mu(s_h, a_h) = return - V^mu(s_1) on every trajectory of a deterministic MDP."""
    rng = np.random.default_rng(0)
    mdp = make(rng)
    assert mdp.deterministic
    mu = rng.dirichlet(np.ones(mdp.A), size=(mdp.H, mdp.S))
    s, a, _ = sample_trajectories(mdp, uniform_policy(mdp), 500, rng)
    assert np.abs(advantage_telescoping_gap(mdp, mu, s, a)).max() < 1e-12


def test_telescoping_holds_only_in_expectation_on_stochastic_mdps():
    """Performance difference: E_pi[sum_h A^mu] = V^pi - V^mu for every pi, though not per trajectory."""
    rng = np.random.default_rng(1)
    mdp = stochastic_mdp(4, 3, 2, 0.5, rng)
    mu = rng.dirichlet(np.ones(2), size=(4, 3))
    pi = rng.dirichlet(np.ones(2), size=(4, 3))
    _, V, A = advantage(mdp, mu)
    assert np.isclose(policy_value(mdp, pi, R=A), policy_value(mdp, pi) - mdp.rho @ V[0])
    s, a, _ = sample_trajectories(mdp, pi, 500, rng)
    assert np.abs(advantage_telescoping_gap(mdp, mu, s, a)).max() > 1e-3


@pytest.mark.parametrize("seed", range(5))
def test_advantage_reward_gives_an_optimal_policy(seed):
    rng = np.random.default_rng(seed)
    for mdp in (tree_mdp(4, 2, rng), chain_mdp(5, 4, 2, rng), stochastic_mdp(4, 3, 3, 0.5, rng)):
        pols = prm_policies(mdp, behaviour_policy(mdp, 0.3))
        assert suboptimality(mdp, pols["advantage"]) < 1e-9


def test_q_reward_fails_on_the_fork():
    mdp = fork_mdp(5, 1.0, 0.6)
    pols = prm_policies(mdp, behaviour_policy(mdp, 0.5))
    assert np.isclose(suboptimality(mdp, pols["q_value"]), 0.4)
    assert suboptimality(mdp, pols["advantage"]) < 1e-12


def test_rollout_q_converges_to_the_exact_q():
    rng = np.random.default_rng(2)
    mdp = stochastic_mdp(3, 2, 2, 0.5, rng)
    mu = uniform_policy(mdp)
    Q, _, _ = advantage(mdp, mu)
    assert np.abs(rollout_q(mdp, mu, 20000, rng) - Q).max() < 0.05
