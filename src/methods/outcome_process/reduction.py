"""The outcome-to-process reduction and the offline process-supervised RL it feeds.

Outcome supervision observes, per trajectory, only its return R(tau) (here the sum of H Bernoulli
step labels); process supervision observes every step label. The paper's transformation
(Section 3; described in the abstract and in summaries of the paper, see the package docstring):

  1. split the outcome dataset into two halves D1, D2;
  2. on D1 fit step rewards by least squares on returns,
        r_hat = argmin_{r in R} sum_{tau in D1} (sum_h r_h(s_h, a_h) - R(tau))^2,
     over the tabular class R = {r : [H] x S x A -> [0, 1]} (`fit_step_rewards`);
  3. relabel every step of D2 with r_hat (`relabel`);
  4. run any process-supervised offline RL algorithm on the relabelled D2 (`pessimistic_vi`).

The offline algorithm is tabular pessimistic value iteration (PEVI, Jin, Yang, Wang 2021; the
VI-LCB of Rashidinejad et al. 2021): empirical Bellman backups minus a count-based bonus
beta * (H - h) / sqrt(N_h(s, a)), clipped to [0, H - h], and 0 for pairs never seen. beta = 0 is
tabular fitted Q iteration (FQI). `best_observed_trajectory` is the conventional-wisdom baseline
that learns from outcomes without step-level credit assignment (it needs trajectory coverage).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .coverage import feature_index
from .mdp import TabularMDP


@dataclass
class Dataset:
    """Offline trajectories: states, actions, step labels (n, H); returns (n,) = step labels summed."""

    states: np.ndarray
    actions: np.ndarray
    step_rewards: np.ndarray

    @property
    def returns(self) -> np.ndarray:
        return self.step_rewards.sum(1)

    def __len__(self) -> int:
        return len(self.states)

    def split(self) -> tuple["Dataset", "Dataset"]:
        """The reduction's two halves (first floor(n/2) trajectories, the rest)."""
        m = len(self) // 2
        take = lambda sl: Dataset(self.states[sl], self.actions[sl], self.step_rewards[sl])  # noqa: E731
        return take(slice(0, m)), take(slice(m, None))


# --- step 2: least-squares step rewards from returns ----------------------------------------------


def trajectory_gram(idx: np.ndarray, returns: np.ndarray, D: int) -> tuple[np.ndarray, np.ndarray]:
    """G = Phi^T Phi / n and b = Phi^T R / n for the step-indicator design Phi (n, D), from indices (n, H)."""
    n, H = idx.shape
    pairs = (idx[:, :, None] * D + idx[:, None, :]).ravel()
    G = np.bincount(pairs, minlength=D * D).reshape(D, D) / n
    b = np.bincount(idx.ravel(), weights=np.repeat(returns, H), minlength=D) / n
    return G, b


def fit_step_rewards(
    mdp: TabularMDP, data: Dataset, max_iter: int = 2000, tol: float = 1e-12, init: float = 0.0
) -> np.ndarray:
    """Step 2 of the reduction: box-constrained least squares of returns on step indicators.

    Minimises (1/2n) sum_i (phi_i . r - R_i)^2 over r in [0, 1]^D with accelerated projected
    gradient (FISTA, step 1/H since ||phi_i||^2 = H bounds the Gram's top eigenvalue), then polishes
    on the free coordinates with an exact solve. Pairs absent from the data keep `init` (0: the
    pessimistic value). Returns r_hat[h, s, a]. Only sums along trajectories are identified:
    r_hat equals the true reward up to directions g with sum_h g_h(s_h, a_h) = 0 on the data.
    """
    H, S, A = mdp.H, mdp.S, mdp.A
    D = H * S * A
    idx = feature_index(mdp, np.arange(H)[None, :], data.states, data.actions)
    seen = np.unique(idx)
    local = np.searchsorted(seen, idx)
    G, b = trajectory_gram(local, data.returns, len(seen))
    r = _box_least_squares(G, b, np.full(len(seen), init), step=1.0 / H, max_iter=max_iter, tol=tol)
    out = np.full(D, init)
    out[seen] = r
    return out.reshape(H, S, A)


def box_fista(obj, grad, x0, step, max_iter, tol):
    """min obj(x) over the box [0, 1]^d by projected FISTA with adaptive restarts (monotone in obj);
    `grad` is obj's gradient and `step` at most 1 / its Lipschitz constant."""
    x = y = np.clip(x0, 0, 1)
    t, f_old = 1.0, obj(x)
    for _ in range(max_iter):
        x_new = np.clip(y - step * grad(y), 0, 1)
        f_new = obj(x_new)
        if f_new > f_old:  # adaptive restart keeps the iteration monotone
            y, t = x, 1.0
            continue
        t_new = 0.5 * (1 + np.sqrt(1 + 4 * t * t))
        y = x_new + ((t - 1) / t_new) * (x_new - x)
        converged = f_old - f_new <= tol * max(1.0, abs(f_old))
        x, t, f_old = x_new, t_new, f_new
        if converged:
            break
    return x


def _box_least_squares(G, b, x0, step, max_iter, tol):
    """min 1/2 x^T G x - b^T x over [0, 1]^d: FISTA with restarts, then a free-set polish."""
    obj = lambda x: 0.5 * x @ G @ x - b @ x  # noqa: E731
    x = box_fista(obj, lambda y: G @ y - b, x0, step, max_iter, tol)
    return _polish(G, b, x, obj)


def _polish(G, b, x, obj):
    """Exact least squares on the coordinates strictly inside the box, kept if it stays feasible."""
    free = (x > 1e-9) & (x < 1 - 1e-9)
    if not free.any():
        return x
    z = x.copy()
    rhs = b[free] - G[np.ix_(free, ~free)] @ x[~free]
    z[free] = np.linalg.lstsq(G[np.ix_(free, free)], rhs, rcond=None)[0]
    if (z >= -1e-12).all() and (z <= 1 + 1e-12).all() and obj(np.clip(z, 0, 1)) <= obj(x):
        return np.clip(z, 0, 1)
    return x


# --- step 3: relabel ------------------------------------------------------------------------------


def relabel(data: Dataset, r_hat: np.ndarray) -> Dataset:
    """Step 3 of the reduction: every step of the trajectories gets the fitted step reward."""
    H = data.states.shape[1]
    step = r_hat[np.arange(H)[None, :], data.states, data.actions]
    return Dataset(data.states, data.actions, step)


def outcome_to_process(mdp: TabularMDP, data: Dataset, lsq: dict) -> tuple[Dataset, np.ndarray]:
    """Steps 1-3: fit on the first half, relabel the second; the labels of the input are used only as returns."""
    d1, d2 = data.split()
    r_hat = fit_step_rewards(mdp, d1, max_iter=lsq["max_iter"], tol=lsq["tol"])
    return relabel(d2, r_hat), r_hat


# --- step 4: offline process-supervised RL --------------------------------------------------------


def empirical_model(mdp: TabularMDP, data: Dataset):
    """Counts N[h, s, a], transition estimates P_hat[h, s, a, s'] and mean step labels r_bar[h, s, a]."""
    H, S, A = mdp.H, mdp.S, mdp.A
    n = len(data)
    h_idx = np.broadcast_to(np.arange(H), (n, H))
    flat = feature_index(mdp, h_idx, data.states, data.actions).ravel()
    N = np.bincount(flat, minlength=H * S * A).reshape(H, S, A)
    r_sum = np.bincount(flat, weights=data.step_rewards.ravel(), minlength=H * S * A).reshape(H, S, A)
    trans = np.zeros((H, S, A, S))
    if H > 1:
        cur = flat.reshape(n, H)[:, :-1].ravel()
        nxt = data.states[:, 1:].ravel()
        trans[:-1] = np.bincount(cur * S + nxt, minlength=(H - 1) * S * A * S).reshape(H - 1, S, A, S)
    Nc = np.maximum(N, 1)
    return N, trans / Nc[..., None], r_sum / Nc


def pessimistic_vi(mdp: TabularMDP, data: Dataset, beta: float, R: np.ndarray | None = None) -> np.ndarray:
    """PEVI on process-supervised data (beta = 0: FQI); returns the greedy deterministic policy [h, s].

    `R`, when given, replaces the empirical step labels by a known reward function (the oracle).
    """
    H, S = mdp.H, mdp.S
    N, P_hat, r_bar = empirical_model(mdp, data)
    if R is not None:
        r_bar = R
    V = np.zeros(S)
    pi = np.zeros((H, S), dtype=int)
    for h in reversed(range(H)):
        bonus = beta * (H - h) / np.sqrt(np.maximum(N[h], 1))
        Q = np.clip(r_bar[h] + P_hat[h] @ V - bonus, 0.0, H - h)
        Q[N[h] == 0] = 0.0
        pi[h] = Q.argmax(-1)
        V = Q.max(-1)
    return pi


# --- conventional-wisdom baseline -----------------------------------------------------------------


def best_observed_trajectory(mdp: TabularMDP, data: Dataset) -> np.ndarray:
    """Outcome learning without credit assignment: imitate the observed trajectory of best mean return.

    Identical (state, action) sequences are grouped and their returns averaged; the policy replays
    the best one (action 0 off its path). It can only output trajectories it has seen, so it needs
    the optimal trajectory itself to be covered: its guarantee scales with trajectory coverage.
    """
    H = mdp.H
    idx = feature_index(mdp, np.arange(H)[None, :], data.states, data.actions)
    groups, inverse = np.unique(idx, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    means = np.bincount(inverse, weights=data.returns) / np.bincount(inverse)
    best = groups[int(np.argmax(means))]
    pi = np.zeros((H, mdp.S), dtype=int)
    s_a = best - np.arange(H) * mdp.S * mdp.A
    pi[np.arange(H), s_a // mdp.A] = s_a % mdp.A
    return pi
