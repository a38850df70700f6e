"""The preference-based (Bradley-Terry) version of the outcome-to-process reduction.

The paper applies its Change of Trajectory Measure Lemma to preference-based RL (trajectory preferences
under a Bradley-Terry model mapped to per-step rewards), improving the dependence from trajectory to
state-action coverage (a third-party note and a podcast summary; the section itself could not be read).
The reduction here mirrors reduction.py step by step:

  1. split the trajectories in halves D1, D2 (reduction.Dataset.split);
  2. pair the trajectories of D1 ((0, 1), (2, 3), ...) and label each pair by a Bradley-Terry comparison,
        P(tau ≻ tau') = sigmoid(R(tau) - R(tau')),  R(tau) = sum_h r_h(s_h, a_h)  (true mean step rewards);
     the step labels of D1 are not used;
  3. fit step rewards by maximum likelihood over the tabular class [0, 1]^{H x S x A}
        r_hat = argmin_r (1/m) sum_pairs -log sigmoid(y (phi(tau) - phi(tau')) . r) + (ridge / 2) ||r - 1/2||^2
     (projected accelerated gradient, `fit_bt_rewards`). A BT likelihood identifies returns only up to a
     common shift, and step rewards only up to directions invisible in return differences; the small
     ridge (ours) pins those directions at the middle of the box;
  4. relabel every step of D2 with r_hat and run the same pessimistic value iteration (reduction.py).
A preference dataset of n trajectories thus carries n / 4 comparisons for the fit and n / 2 unlabelled
trajectories for planning, against n step-labelled trajectories for process supervision.
"""

from __future__ import annotations

import numpy as np

from methods.common.io import log

from .coverage import behaviour_policy, feature_index
from .experiments import FAMILY_TAG, loglog_slope
from .mdp import TabularMDP, make_mdp, one_hot, sample_trajectories, suboptimality
from .reduction import Dataset, box_fista, pessimistic_vi, relabel


def trajectory_features(mdp: TabularMDP, data: Dataset) -> np.ndarray:
    """Indices (n, H) of the step-indicator features e_{(h, s_h, a_h)} of every trajectory."""
    return feature_index(mdp, np.arange(mdp.H)[None, :], data.states, data.actions)


def bt_preferences(mdp: TabularMDP, data: Dataset, rng: np.random.Generator):
    """Pairs (2i, 2i + 1) of `data` with Bradley-Terry labels y = +1 (first preferred) or -1; returns idx1, idx2, y."""
    idx = trajectory_features(mdp, data)
    m = len(idx) // 2
    i1, i2 = idx[0 : 2 * m : 2], idx[1 : 2 * m : 2]
    R = mdp.R.reshape(-1)
    p_first = 1.0 / (1.0 + np.exp(-(R[i1].sum(1) - R[i2].sum(1))))
    y = np.where(rng.uniform(size=m) < p_first, 1.0, -1.0)
    return i1, i2, y


def bt_loss_and_grad(r: np.ndarray, i1: np.ndarray, i2: np.ndarray, y: np.ndarray, ridge: float):
    """Mean negative BT log-likelihood plus (ridge / 2) ||r - 1/2||^2, and its gradient in r (D,)."""
    z = y * (r[i1].sum(1) - r[i2].sum(1))  # (m,)
    loss = float(np.mean(np.logaddexp(0.0, -z))) + 0.5 * ridge * float(np.sum((r - 0.5) ** 2))
    w = -y / (1.0 + np.exp(z)) / len(y)  # d loss / d (r . (phi1 - phi2))
    D = len(r)
    H = i1.shape[1]
    g = np.bincount(i1.ravel(), weights=np.repeat(w, H), minlength=D) - np.bincount(
        i2.ravel(), weights=np.repeat(w, H), minlength=D
    )
    return loss, g + ridge * (r - 0.5)


def fit_bt_rewards(
    mdp: TabularMDP, i1: np.ndarray, i2: np.ndarray, y: np.ndarray, ridge: float, max_iter: int, tol: float
) -> np.ndarray:
    """Step 3: box-constrained BT maximum likelihood by FISTA with restarts; returns r_hat[h, s, a].

    Step 1 / (H / 2 + ridge): the logistic loss has curvature <= 1/4 and ||phi - phi'||^2 <= 2H.
    """
    D = mdp.H * mdp.S * mdp.A
    step = 1.0 / (mdp.H / 2.0 + ridge)
    x = box_fista(
        lambda r: bt_loss_and_grad(r, i1, i2, y, ridge)[0],
        lambda r: bt_loss_and_grad(r, i1, i2, y, ridge)[1],
        np.full(D, 0.5),
        step,
        max_iter,
        tol,
    )
    return x.reshape(mdp.H, mdp.S, mdp.A)


def preference_to_process(mdp: TabularMDP, data: Dataset, rng: np.random.Generator, bt: dict):
    """Steps 1-3: BT fit on the first half's pairs, relabel the second half; returns (relabelled D2, r_hat)."""
    d1, d2 = data.split()
    i1, i2, y = bt_preferences(mdp, d1, rng)
    r_hat = fit_bt_rewards(mdp, i1, i2, y, bt["ridge"], bt["max_iter"], bt["tol"])
    return relabel(d2, r_hat), r_hat


def run_preference_rate(
    family: str, spec: dict, eps: float, seeds: list[int], n_grid: list[int], beta: float, bt: dict
) -> dict:
    """Sub-optimality vs n (array (seed, n)) of the BT reduction on one family.

    Instances and datasets are drawn from the same streams as experiments.run_rate, so the process-
    supervised and oracle learners it is compared with are that experiment's (the same numbers; they are
    not recomputed here); the BT labels come from their own stream [seed, 6, n].
    """
    sub = np.zeros((len(seeds), len(n_grid)))
    for i, seed in enumerate(seeds):
        mdp = make_mdp(family, spec, np.random.default_rng([seed, 0, FAMILY_TAG[family]]))
        mu = behaviour_policy(mdp, eps)
        for j, n in enumerate(n_grid):
            data = Dataset(*sample_trajectories(mdp, mu, n, np.random.default_rng([seed, 1, n])))
            relabelled, _ = preference_to_process(mdp, data, np.random.default_rng([seed, 6, n]), bt)
            sub[i, j] = suboptimality(mdp, one_hot(pessimistic_vi(mdp, relabelled, beta), mdp.A))
    log(f"{family} (BT): preference {np.round(sub.mean(0), 3).tolist()}")
    return {
        "family": family,
        "spec": spec,
        "behaviour_eps": eps,
        "beta": beta,
        "bt": bt,
        "seeds": seeds,
        "n_trajectories": n_grid,
        "subopt": {"preference": sub.tolist()},
        "slopes": {"preference": loglog_slope(n_grid, sub.mean(axis=0))},
    }


def preference_rate_job(
    family: str, spec: dict, eps: float, seeds: list[int], n_grid: list[int], beta: float, bt: dict, out_json: str
) -> None:
    """Step outcome_process_preference: the BT rate experiment for one family, written as JSON."""
    from methods.common.io import write_json

    write_json(out_json, run_preference_rate(family, spec, eps, list(seeds), list(n_grid), beta, dict(bt)))
