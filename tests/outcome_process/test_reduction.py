"""The least-squares step-reward fit, the relabelling and the offline learners."""

import numpy as np
import pytest

from methods.outcome_process.coverage import behaviour_policy
from methods.outcome_process.mdp import (
    chain_mdp,
    one_hot,
    policy_value,
    sample_trajectories,
    stochastic_mdp,
    suboptimality,
    tree_mdp,
    uniform_policy,
)
from methods.outcome_process.reduction import (
    Dataset,
    best_observed_trajectory,
    empirical_model,
    fit_step_rewards,
    outcome_to_process,
    pessimistic_vi,
    relabel,
    trajectory_gram,
)


def _noiseless(mdp, n, rng):
    states, actions, _ = sample_trajectories(mdp, uniform_policy(mdp), n, rng)
    return Dataset(states, actions, mdp.R[np.arange(mdp.H)[None, :], states, actions])


@pytest.mark.parametrize("family", ["tree", "chain", "stochastic"])
def test_fit_recovers_the_true_rewards_with_full_coverage(family):
    """Noiseless returns, every trajectory covered: the fit agrees with r on every policy's value."""
    rng = np.random.default_rng(0)
    mdp = {
        "tree": tree_mdp(4, 2, rng),
        "chain": chain_mdp(5, 2, 2, rng),
        "stochastic": stochastic_mdp(4, 3, 2, 0.5, rng),
    }[family]
    data = _noiseless(mdp, 4000, rng)
    r_hat = fit_step_rewards(mdp, data, max_iter=20000, tol=1e-15)
    fitted = r_hat[np.arange(mdp.H)[None, :], data.states, data.actions].sum(1)
    assert np.abs(fitted - data.returns).max() < 1e-5
    for _ in range(10):
        pi = rng.dirichlet(np.ones(mdp.A), size=(mdp.H, mdp.S))
        assert abs(policy_value(mdp, pi, R=r_hat) - policy_value(mdp, pi)) < 1e-5


def test_fit_is_the_reward_itself_when_it_is_identified():
    """One step (a bandit per state): the return is the step reward, so the fit must equal r exactly."""
    rng = np.random.default_rng(1)
    mdp = chain_mdp(1, 1, 4, rng)
    r_hat = fit_step_rewards(mdp, _noiseless(mdp, 400, rng), max_iter=20000, tol=1e-15)
    assert np.allclose(r_hat, mdp.R, atol=1e-8)


def test_fit_is_unique_up_to_return_preserving_directions():
    """Two-step tree: r_hat - r may shift reward between the steps of a path, never change a path's sum."""
    rng = np.random.default_rng(1)
    mdp = tree_mdp(2, 2, rng)
    r_hat = fit_step_rewards(mdp, _noiseless(mdp, 2000, rng), max_iter=20000, tol=1e-15)
    g = r_hat - mdp.R
    for a in range(2):
        assert np.allclose(g[0, 0, a] + g[1, a, :2], 0.0, atol=1e-6)


def test_fit_stays_in_the_box_and_improves_with_data():
    """Noisy (Bernoulli) labels: r_hat in [0, 1], and its policy values approach the true ones with n."""
    rng = np.random.default_rng(2)
    mdp = chain_mdp(6, 2, 2, rng)
    pis = [one_hot(rng.integers(0, 2, (6, 2)), 2) for _ in range(20)]
    gaps = []
    for n in (100, 3000):
        s, a, y = sample_trajectories(mdp, uniform_policy(mdp), n, np.random.default_rng(n))
        r_hat = fit_step_rewards(mdp, Dataset(s, a, y))
        assert (r_hat >= 0).all() and (r_hat <= 1).all()
        gaps.append(np.mean([abs(policy_value(mdp, p, R=r_hat) - policy_value(mdp, p)) for p in pis]))
    assert gaps[1] < gaps[0] / 2


def test_gram_matches_the_dense_design():
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 7, size=(50, 4))
    y = rng.random(50)
    G, b = trajectory_gram(idx, y, 7)
    Phi = np.zeros((50, 7))
    for i in range(50):
        np.add.at(Phi[i], idx[i], 1.0)
    assert np.allclose(G, Phi.T @ Phi / 50) and np.allclose(b, Phi.T @ y / 50)


def test_reduction_uses_only_returns_and_splits_in_halves():
    rng = np.random.default_rng(4)
    mdp = chain_mdp(4, 2, 2, rng)
    s, a, y = sample_trajectories(mdp, uniform_policy(mdp), 101, rng)
    data = Dataset(s, a, y)
    shuffled = Dataset(s, a, rng.permuted(y, axis=1))  # same returns, other step labels
    lsq = {"max_iter": 500, "tol": 1e-12}
    (d_a, r_a), (_, r_b) = outcome_to_process(mdp, data, lsq), outcome_to_process(mdp, shuffled, lsq)
    assert np.allclose(r_a, r_b) and len(d_a) == 51
    assert np.allclose(relabel(d_a, r_a).step_rewards, d_a.step_rewards)


def test_empirical_model_counts():
    rng = np.random.default_rng(5)
    mdp = stochastic_mdp(3, 3, 2, 0.5, rng)
    s, a, y = sample_trajectories(mdp, uniform_policy(mdp), 20000, rng)
    N, P_hat, r_bar = empirical_model(mdp, Dataset(s, a, y))
    assert N.sum() == 20000 * 3
    seen = N[:-1] > 500
    assert np.abs(P_hat[:-1][seen] - mdp.P[:-1][seen]).max() < 0.08
    assert np.abs(r_bar[N > 500] - mdp.R[N > 500]).max() < 0.08


@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_pevi_with_lots_of_data_is_optimal(beta):
    rng = np.random.default_rng(6)
    mdp = stochastic_mdp(4, 3, 2, 0.5, rng)
    s, a, y = sample_trajectories(mdp, behaviour_policy(mdp, 0.8), 50000, rng)
    pi = pessimistic_vi(mdp, Dataset(s, a, y), beta, R=mdp.R)
    assert suboptimality(mdp, one_hot(pi, mdp.A)) < 1e-9


def test_pevi_avoids_unseen_actions():
    """Pessimism: an action never tried is valued 0, so PEVI keeps to the behaviour's actions."""
    mdp = chain_mdp(3, 2, 2, np.random.default_rng(7))
    mu = one_hot(np.zeros((3, 2), dtype=int), 2)
    s, a, y = sample_trajectories(mdp, mu, 100, np.random.default_rng(7))
    pi = pessimistic_vi(mdp, Dataset(s, a, y), 0.5)
    assert (pi[np.arange(3), s[0]] == 0).all()


def test_best_observed_trajectory_replays_it():
    mdp = chain_mdp(4, 2, 2, np.random.default_rng(8))
    s, a, _ = sample_trajectories(mdp, uniform_policy(mdp), 200, np.random.default_rng(8))
    data = Dataset(s, a, mdp.R[np.arange(4)[None, :], s, a])
    pi = best_observed_trajectory(mdp, data)
    best = data.returns.max()
    assert np.isclose(policy_value(mdp, one_hot(pi, 2)), best)
