"""Behaviour policies, the two coverage coefficients, and the Change of Trajectory Measure ratio.

Coverage of a behaviour policy mu (Section 3 of the paper; exact in the tabular case):

    state-action  C_sa(pi, mu)   = max_{h,s,a} d^pi_h(s,a) / d^mu_h(s,a)
    trajectory    C_traj(pi, mu) = max_tau  rho^pi(tau) / rho^mu(tau)
    all-policy versions take the supremum over every policy pi as well.

`trajectory_measure_ratio` is the quantity the Change of Trajectory Measure Lemma bounds: the
worst case, over every step-wise function f_h(s,a), of

    E_{tau ~ pi}[(sum_h f_h(s_h,a_h))^2] / E_{tau ~ mu}[(sum_h f_h(s_h,a_h))^2],

a generalized Rayleigh quotient of the trajectory second-moment matrices M_pi, M_mu over the
H*S*A step-indicator features. Trivially C_sa <= ratio <= C_traj (take f an indicator; bound the
density ratio pointwise); the lemma says the ratio is at most poly(H) * C_sa, i.e. trajectory-level
errors transfer between policies at the price of state-action coverage only.
"""

from __future__ import annotations

import numpy as np

from .mdp import TabularMDP, occupancy, one_hot, plan

# --- behaviour policies ---------------------------------------------------------------------------


def worst_policy(mdp: TabularMDP) -> np.ndarray:
    """The deterministic policy of least value, [h, s]."""
    pi, _, _ = plan(mdp, minimize=True)
    return pi


def mixture_policy(mdp: TabularMDP, base: np.ndarray, eps: float) -> np.ndarray:
    """mu = (1 - eps) * base + eps * uniform: eps = 1 is uniform, small eps concentrates on `base`."""
    assert 0 < eps <= 1, f"behaviour eps must lie in (0, 1]; got {eps}"
    return (1 - eps) * one_hot(base, mdp.A) + eps / mdp.A


def behaviour_policy(mdp: TabularMDP, eps: float) -> np.ndarray:
    """The behaviour policy of every experiment: eps-mixture of the worst policy and uniform."""
    return mixture_policy(mdp, worst_policy(mdp), eps)


# --- coverage coefficients ------------------------------------------------------------------------


def max_reach(mdp: TabularMDP) -> np.ndarray:
    """sup_pi P_pi(s_h = s) for every (h, s): backward planning for the indicator of each target."""
    H, S = mdp.H, mdp.S
    reach = np.zeros((H, S))
    for h in range(H):
        W = np.eye(S)  # W[target, s]: best probability of target
        for k in reversed(range(h)):
            W = np.einsum("sat,gt->gsa", mdp.P[k], W).max(-1)
        reach[h] = W @ mdp.rho
    return reach


def sa_coverage(mdp: TabularMDP, mu: np.ndarray, pi: np.ndarray | None = None) -> float:
    """C_sa(pi, mu); with pi None the all-policy coefficient sup_pi C_sa(pi, mu)."""
    d_mu = occupancy(mdp, mu)
    if pi is None:
        num = np.broadcast_to(max_reach(mdp)[:, :, None], d_mu.shape)
    else:
        num = occupancy(mdp, pi)
    return _max_ratio(num, d_mu)


def traj_coverage(mdp: TabularMDP, mu: np.ndarray, pi: np.ndarray | None = None) -> float:
    """C_traj(pi, mu) = max over pi-feasible trajectories of prod_h pi(a_h|s_h) / mu(a_h|s_h).

    Transitions cancel in the ratio; with pi None every feasible trajectory counts and pi follows
    it deterministically (the all-policy coefficient). A longest-path DP over layers, in logs.
    """
    H, S, A = mdp.H, mdp.S, mdp.A
    with np.errstate(divide="ignore"):
        log_mu = np.log(mu)
        log_pi = np.zeros((H, S, A)) if pi is None else np.log(pi)
    gain = np.where(np.isfinite(log_pi), log_pi - log_mu, -np.inf)  # -inf: pi never takes a
    G = np.zeros(S)
    for h in reversed(range(H)):
        if h == H - 1:
            cont = np.zeros((S, A))
        else:
            feasible = mdp.P[h] > 0  # (S, A, S')
            cont = np.where(feasible, G[None, None, :], -np.inf).max(-1)
        G = (gain[h] + cont).max(-1)
    best = G[mdp.rho > 0].max()
    return float(np.exp(best)) if best < 700 else float("inf")


def _max_ratio(num: np.ndarray, den: np.ndarray) -> float:
    support = num > 1e-15
    if (den[support] <= 0).any():
        return float("inf")
    return float((num[support] / den[support]).max())


# --- the Change of Trajectory Measure Lemma -------------------------------------------------------


def feature_index(mdp: TabularMDP, h: np.ndarray | int, s: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Index of the step-indicator feature e_{(h, s, a)} among the D = H*S*A features."""
    return (np.asarray(h) * mdp.S + s) * mdp.A + a


def second_moment(mdp: TabularMDP, pi: np.ndarray) -> np.ndarray:
    """M_pi = E_pi[phi phi^T] with phi(tau) = sum_h e_{(h, s_h, a_h)}; shape (D, D), D = H*S*A.

    Block (h, h') holds the joint law P_pi(s_h=s, a_h=a, s_h'=s', a_h'=a'), propagated forward
    from each (s, a) at layer h.
    """
    H, S, A = mdp.H, mdp.S, mdp.A
    SA = S * A
    M = np.zeros((H, SA, H, SA))
    d = occupancy(mdp, pi)
    for h in range(H):
        M[h, :, h, :] = np.diag(d[h].ravel())
        joint = d[h].ravel()[:, None] * mdp.P[h].reshape(SA, S)  # (SA, S): mass at layer h+1
        for k in range(h + 1, H):
            with_action = joint[:, :, None] * pi[k][None]  # (SA, S, A)
            M[h, :, k, :] = with_action.reshape(SA, SA)
            M[k, :, h, :] = M[h, :, k, :].T
            joint = np.einsum("xsa,sat->xt", with_action, mdp.P[k])
    return M.reshape(H * SA, H * SA)


def trajectory_measure_ratio(M_pi: np.ndarray, M_mu: np.ndarray, rtol: float = 1e-10) -> float:
    """sup_f (f^T M_pi f) / (f^T M_mu f): the largest generalized eigenvalue on the range of M_mu.

    Infinite when pi puts mass on a direction mu never sees (some sum_h f_h vanishes mu-a.s. but
    not pi-a.s.).
    """
    lam, U = np.linalg.eigh(M_mu)
    keep = lam > rtol * lam.max()
    null = U[:, ~keep]
    if null.size and np.abs(null.T @ M_pi @ null).max() > 1e-8 * max(1.0, np.abs(M_pi).max()):
        return float("inf")
    W = U[:, keep] / np.sqrt(lam[keep])
    return float(np.linalg.eigvalsh(W.T @ M_pi @ W).max())
