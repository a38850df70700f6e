"""outcome_process, Bradley-Terry version of the reduction: the likelihood's gradient, the fit, the labels,
and the rate experiment on the reward version's datasets."""

import numpy as np
import pytest
import torch

from methods.outcome_process.experiments import run_rate
from methods.outcome_process.mdp import chain_mdp, sample_trajectories, tree_mdp, uniform_policy
from methods.outcome_process.preference import (
    bt_loss_and_grad,
    bt_preferences,
    fit_bt_rewards,
    preference_to_process,
    run_preference_rate,
    trajectory_features,
)
from methods.outcome_process.reduction import Dataset


def test_bt_gradient_matches_autograd():
    rng = np.random.default_rng(0)
    D, H, m = 24, 4, 50
    i1, i2 = rng.integers(0, D, size=(m, H)), rng.integers(0, D, size=(m, H))
    y = np.where(rng.uniform(size=m) < 0.5, 1.0, -1.0)
    r = rng.uniform(size=D)
    loss, g = bt_loss_and_grad(r, i1, i2, y, ridge=0.3)
    rt = torch.tensor(r, dtype=torch.float64, requires_grad=True)
    z = torch.tensor(y) * (rt[torch.tensor(i1)].sum(1) - rt[torch.tensor(i2)].sum(1))
    ref = torch.nn.functional.softplus(-z).mean() + 0.15 * ((rt - 0.5) ** 2).sum()
    ref.backward()
    assert loss == pytest.approx(ref.item(), rel=1e-12)
    assert g == pytest.approx(rt.grad.numpy(), abs=1e-12)


def test_labels_follow_bradley_terry():
    mdp = tree_mdp(3, 2, np.random.default_rng(1))
    data = Dataset(*sample_trajectories(mdp, uniform_policy(mdp), 40000, np.random.default_rng(2)))
    i1, i2, y = bt_preferences(mdp, data, np.random.default_rng(3))
    R = mdp.R.reshape(-1)
    d = R[i1].sum(1) - R[i2].sum(1)
    p = 1 / (1 + np.exp(-d))
    # mean of y equals mean of 2p - 1 within 4 standard errors
    se = np.sqrt(np.mean(1 - (2 * p - 1) ** 2) / len(y))
    assert abs(np.mean(y) - np.mean(2 * p - 1)) < 4 * se
    assert trajectory_features(mdp, data).shape == (40000, 3)


def test_fit_recovers_return_differences_with_many_comparisons():
    # on a tree every trajectory is one leaf, so returns are identified up to a common shift
    mdp = tree_mdp(3, 2, np.random.default_rng(4))
    data = Dataset(*sample_trajectories(mdp, uniform_policy(mdp), 60000, np.random.default_rng(5)))
    i1, i2, y = bt_preferences(mdp, data, np.random.default_rng(6))
    r_hat = fit_bt_rewards(mdp, i1, i2, y, ridge=1e-6, max_iter=3000, tol=1e-14).reshape(-1)
    R = mdp.R.reshape(-1)
    idx = trajectory_features(mdp, data)
    true, fit = R[idx].sum(1), r_hat[idx].sum(1)
    assert np.abs((fit - fit.mean()) - (true - true.mean())).max() < 0.1


def test_reduction_relabels_the_second_half_only():
    mdp = chain_mdp(4, 2, 2, np.random.default_rng(7))
    data = Dataset(*sample_trajectories(mdp, uniform_policy(mdp), 101, np.random.default_rng(8)))
    relabelled, r_hat = preference_to_process(
        mdp, data, np.random.default_rng(9), {"ridge": 1e-3, "max_iter": 50, "tol": 1e-9}
    )
    assert len(relabelled) == 51 and np.all(relabelled.states == data.states[50:])
    assert r_hat.shape == (4, mdp.S, mdp.A) and r_hat.min() >= 0 and r_hat.max() <= 1


def test_rate_experiment_shapes_and_the_reward_versions_datasets():
    spec = {"horizon": 3, "n_states": 2, "n_actions": 2}
    out = run_preference_rate("chain", spec, 0.5, [0, 1], [20, 40], 0.5, {"ridge": 1e-3, "max_iter": 50, "tol": 1e-8})
    assert set(out["subopt"]) == {"preference"}
    assert np.array(out["subopt"]["preference"]).shape == (2, 2)
    # the learners it is compared with come from the rate experiment on the same seeds and n grid
    rate = run_rate("chain", spec, 0.5, [0, 1], [20, 40], 0.5, {"max_iter": 50, "tol": 1e-8})
    assert set(rate["subopt"]) == {"outcome", "process", "oracle", "naive", "uniform", "behaviour"}
    assert rate["n_trajectories"] == out["n_trajectories"] and rate["seeds"] == out["seeds"]
