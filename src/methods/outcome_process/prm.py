"""Process reward models built from a policy's value functions (the paper's Section 4 result).

With a verifier or rollouts one can compute Q^mu and V^mu of some policy mu (possibly far from
optimal) and use a function of them as the step reward of an RL problem on the same dynamics.

* Advantage A^mu_h(s, a) = Q^mu_h(s, a) - V^mu_h(s) is an optimal process reward: by the
  performance-difference lemma, E_pi[sum_h A^mu_h(s_h, a_h)] = V^pi(rho) - V^mu(rho) for every
  policy pi, so maximising the process reward A^mu maximises the true value. In a deterministic MDP
  the identity holds trajectory by trajectory (telescoping):
  sum_h A^mu_h(s_h, a_h) = sum_h r_h(s_h, a_h) - V^mu_1(s_1)  (`advantage_telescoping_gap`).
* Q^mu as the process reward is not: sum_h Q^mu_h counts a reward collected at step k once for
  every earlier step, so it favours late payoffs. On `mdp.fork_mdp` (our instance of the paper's
  lower-bound construction, which we could not read) the policy that maximises sum_h Q^mu takes the
  late branch and loses early_reward - late_reward.
* `rollout_q` estimates Q^mu by Monte Carlo rollouts of mu (the "rollout capability" setting).
"""

from __future__ import annotations

import numpy as np

from .mdp import TabularMDP, _sample_rows, evaluate_policy, one_hot, plan


def advantage(mdp: TabularMDP, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact Q^mu[h, s, a], V^mu[h, s] and A^mu = Q^mu - V^mu."""
    Q, V = evaluate_policy(mdp, mu)
    return Q, V, Q - V[:-1, :, None]


def policy_from_process_reward(mdp: TabularMDP, prm: np.ndarray) -> np.ndarray:
    """The optimal policy [h, s] of the MDP whose step rewards are the process reward `prm`."""
    pi, _, _ = plan(mdp, R=prm)
    return pi


def advantage_telescoping_gap(mdp: TabularMDP, mu: np.ndarray, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """sum_h A^mu(s_h, a_h) - (return - V^mu_1(s_1)) per trajectory; zero on deterministic MDPs."""
    _, V, A = advantage(mdp, mu)
    h = np.arange(mdp.H)[None, :]
    adv_sum = A[h, states, actions].sum(1)
    ret = mdp.R[h, states, actions].sum(1)
    return adv_sum - (ret - V[0, states[:, 0]])


def rollout_q(mdp: TabularMDP, mu: np.ndarray, n_rollouts: int, rng: np.random.Generator) -> np.ndarray:
    """Monte Carlo Q^mu[h, s, a]: mean sampled return of n_rollouts rollouts of mu after (s, a) at h."""
    H, S, A = mdp.H, mdp.S, mdp.A
    Q = np.zeros((H, S, A))
    for h in range(H):
        s0 = np.repeat(np.arange(S), A * n_rollouts)
        a0 = np.tile(np.repeat(np.arange(A), n_rollouts), S)
        s, a, ret = s0, a0, np.zeros(len(s0))
        for k in range(h, H):
            if k > h:
                a = _sample_rows(mu[k, s], rng.random(len(s)))
            ret += rng.random(len(s)) < mdp.R[k, s, a]
            if k + 1 < H:
                s = _sample_rows(mdp.P[k, s, a], rng.random(len(s)))
        Q[h] = ret.reshape(S, A, n_rollouts).mean(-1)
    return Q


def prm_policies(mdp: TabularMDP, mu: np.ndarray, Q_mu: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Policies (as probabilities) learned from each process reward built from mu.

    advantage: RL with A^mu as the step reward; q_value: RL with Q^mu as the step reward;
    greedy: one step of policy improvement, argmax_a Q^mu (= argmax_a A^mu; no RL).
    `Q_mu` overrides the exact Q^mu (e.g. by `rollout_q`); V^mu is then sum_a mu Q_mu.
    """
    if Q_mu is None:
        Q_mu, _, A_mu = advantage(mdp, mu)
    else:
        A_mu = Q_mu - (mu * Q_mu).sum(-1, keepdims=True)
    return {
        "advantage": one_hot(policy_from_process_reward(mdp, A_mu), mdp.A),
        "q_value": one_hot(policy_from_process_reward(mdp, Q_mu), mdp.A),
        "greedy": one_hot(Q_mu.argmax(-1), mdp.A),
    }
