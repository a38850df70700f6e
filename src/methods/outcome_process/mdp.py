"""Tabular episodic MDPs in layered form, exact policy evaluation, planning and sampling.

An MDP here has horizon H, at most S states per layer and A actions. Layer h holds its own copy of
the states, so the time-inhomogeneous arrays below are exactly the paper's episodic MDP
(S, A, H, P, r) (Section 2 of Jia, Rakhlin, Xie 2025):

    P[h, s, a, s']   probability of state s' at layer h+1 after (s, a) at layer h  (H, S, A, S)
    R[h, s, a]       mean step reward in [0, 1]; observed step rewards are Bernoulli(R)  (H, S, A)
    rho[s]           initial distribution over layer-0 states  (S,)

A policy is an array pi[h, s, a] of action probabilities (Markov, possibly stochastic); a
deterministic policy is an integer array [h, s] turned into one by `one_hot`. The return of a
trajectory is the sum of its H step rewards; its value is the expectation over rho, P and pi.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TabularMDP:
    P: np.ndarray  # (H, S, A, S)
    R: np.ndarray  # (H, S, A)
    rho: np.ndarray  # (S,)
    name: str = "mdp"

    def __post_init__(self):
        H, S, A, S2 = self.P.shape
        assert S == S2, f"P must be (H, S, A, S); got {self.P.shape}"
        assert self.R.shape == (H, S, A), f"R must be (H, S, A) = {(H, S, A)}; got {self.R.shape}"
        assert self.rho.shape == (S,), f"rho must be ({S},); got {self.rho.shape}"
        assert np.allclose(self.P.sum(-1), 1.0), "every row P[h, s, a, :] must sum to 1"
        assert np.isclose(self.rho.sum(), 1.0), "rho must sum to 1"
        assert (self.R >= 0).all() and (self.R <= 1).all(), "mean rewards must lie in [0, 1]"

    @property
    def H(self) -> int:
        return self.P.shape[0]

    @property
    def S(self) -> int:
        return self.P.shape[1]

    @property
    def A(self) -> int:
        return self.P.shape[2]

    @property
    def deterministic(self) -> bool:
        """True when every transition and the initial state are deterministic."""
        return bool(np.isin(self.P, (0.0, 1.0)).all() and np.isin(self.rho, (0.0, 1.0)).all())

    def with_rewards(self, R: np.ndarray) -> "TabularMDP":
        return TabularMDP(self.P, np.asarray(R, dtype=float), self.rho, self.name)


# --- constructors ---------------------------------------------------------------------------------


def tree_mdp(horizon: int, n_actions: int, rng: np.random.Generator) -> TabularMDP:
    """Deterministic A-ary tree: layer h has A^h nodes, node s and action a lead to node s*A + a.

    Every trajectory is a distinct root-to-leaf path, so state-action coverage of the last layer
    equals trajectory coverage: the tree is the family in which the two coefficients coincide.
    """
    H, A = horizon, n_actions
    S = A ** (H - 1)
    P = np.zeros((H, S, A, S))
    for h in range(H):
        for s in range(S):
            for a in range(A):
                child = s * A + a
                P[h, s, a, child if (s < A**h and child < S) else 0] = 1.0
    R = rng.uniform(0, 1, size=(H, S, A))
    return TabularMDP(P, R, _delta(S, 0), "tree")


def chain_mdp(horizon: int, n_states: int, n_actions: int, rng: np.random.Generator) -> TabularMDP:
    """Deterministic layered chain (de Bruijn graph): state s and action a lead to (s*A + a) mod S.

    The state remembers the last few actions, so A^H trajectories share S*A state-action pairs per
    layer: under a uniform behaviour policy state-action coverage stays S*A while trajectory coverage
    is A^H (the family of the coverage sweep).
    """
    H, S, A = horizon, n_states, n_actions
    P = np.zeros((H, S, A, S))
    for s in range(S):
        for a in range(A):
            P[:, s, a, (s * A + a) % S] = 1.0
    R = rng.uniform(0, 1, size=(H, S, A))
    return TabularMDP(P, R, _delta(S, 0), "chain")


def stochastic_mdp(
    horizon: int, n_states: int, n_actions: int, dirichlet: float, rng: np.random.Generator
) -> TabularMDP:
    """Layered MDP with random transitions P[h, s, a] ~ Dirichlet(dirichlet * 1) and uniform rewards."""
    H, S, A = horizon, n_states, n_actions
    P = rng.dirichlet(np.full(S, dirichlet), size=(H, S, A))
    R = rng.uniform(0, 1, size=(H, S, A))
    return TabularMDP(P, R, _delta(S, 0), "stochastic")


def fork_mdp(horizon: int, early_reward: float, late_reward: float) -> TabularMDP:
    """The counterexample where Q^mu fails as a process reward (see prm.py): a two-branch fork.

    Action 0 at the root pays `early_reward` at once and nothing afterwards; action 1 pays nothing
    until the last step, where action 0 pays `late_reward` (< early_reward). The optimal policy takes
    the early branch; a reward that sums Q-values along the path counts the late payoff once per step.
    """
    assert horizon >= 2 and 0 <= late_reward < early_reward <= 1, (
        "fork needs horizon >= 2 and 0 <= late_reward < early_reward <= 1"
    )
    H, S, A = horizon, 2, 2
    P = np.zeros((H, S, A, S))
    P[0, 0, 0, 0] = P[0, 0, 1, 1] = 1.0  # root: branch 0 (early) or branch 1 (late)
    P[0, 1, :, 1] = 1.0  # layer-0 state 1 is unreachable
    P[1:, 0, :, 0] = P[1:, 1, :, 1] = 1.0  # branches keep to themselves
    R = np.zeros((H, S, A))
    R[0, 0, 0] = early_reward
    R[H - 1, 1, 0] = late_reward
    return TabularMDP(P, R, _delta(S, 0), "fork")


def make_mdp(family: str, spec: dict, rng: np.random.Generator) -> TabularMDP:
    """One MDP of a family from its config spec (config: outcome_process.mdp.<family>)."""
    if family == "tree":
        return tree_mdp(spec["horizon"], spec["n_actions"], rng)
    if family == "chain":
        return chain_mdp(spec["horizon"], spec["n_states"], spec["n_actions"], rng)
    if family == "stochastic":
        return stochastic_mdp(spec["horizon"], spec["n_states"], spec["n_actions"], spec["dirichlet"], rng)
    if family == "fork":
        return fork_mdp(spec["horizon"], spec["early_reward"], spec["late_reward"])
    raise ValueError(f"unknown MDP family {family!r}; known: tree, chain, stochastic, fork")


def _delta(S: int, s: int) -> np.ndarray:
    rho = np.zeros(S)
    rho[s] = 1.0
    return rho


# --- policies -------------------------------------------------------------------------------------


def one_hot(actions: np.ndarray, n_actions: int) -> np.ndarray:
    """Deterministic policy [h, s] -> probabilities [h, s, a]."""
    return np.eye(n_actions)[actions]


def uniform_policy(mdp: TabularMDP) -> np.ndarray:
    return np.full((mdp.H, mdp.S, mdp.A), 1.0 / mdp.A)


# --- exact evaluation and planning ----------------------------------------------------------------


def evaluate_policy(mdp: TabularMDP, pi: np.ndarray, R: np.ndarray | None = None):
    """Exact Q^pi[h, s, a] and V^pi[h, s] by backward induction (V at layer H is 0).

    `R` replaces the mean rewards (e.g. a process reward model) while keeping the transitions.
    """
    R = mdp.R if R is None else R
    H, S, A = mdp.H, mdp.S, mdp.A
    Q = np.zeros((H, S, A))
    V = np.zeros((H + 1, S))
    for h in reversed(range(H)):
        Q[h] = R[h] + mdp.P[h] @ V[h + 1]
        V[h] = (pi[h] * Q[h]).sum(-1)
    return Q, V


def plan(mdp: TabularMDP, R: np.ndarray | None = None, minimize: bool = False):
    """Optimal (or, with minimize, worst) deterministic policy [h, s] for rewards R, with Q and V."""
    R = mdp.R if R is None else R
    H, S, A = mdp.H, mdp.S, mdp.A
    Q = np.zeros((H, S, A))
    V = np.zeros((H + 1, S))
    pi = np.zeros((H, S), dtype=int)
    for h in reversed(range(H)):
        Q[h] = R[h] + mdp.P[h] @ V[h + 1]
        pi[h] = Q[h].argmin(-1) if minimize else Q[h].argmax(-1)
        V[h] = np.take_along_axis(Q[h], pi[h][:, None], -1)[:, 0]
    return pi, Q, V


def policy_value(mdp: TabularMDP, pi: np.ndarray, R: np.ndarray | None = None) -> float:
    """Expected return of pi from the initial distribution."""
    _, V = evaluate_policy(mdp, pi, R)
    return float(mdp.rho @ V[0])


def optimal_value(mdp: TabularMDP) -> float:
    _, _, V = plan(mdp)
    return float(mdp.rho @ V[0])


def suboptimality(mdp: TabularMDP, pi: np.ndarray) -> float:
    """V*(rho) - V^pi(rho) under the true mean rewards; pi as probabilities [h, s, a]."""
    return optimal_value(mdp) - policy_value(mdp, pi)


def occupancy(mdp: TabularMDP, pi: np.ndarray) -> np.ndarray:
    """d^pi[h, s, a] = P_pi(s_h = s, a_h = a), forward in h."""
    H = mdp.H
    d = np.zeros((H, mdp.S, mdp.A))
    ds = mdp.rho.copy()
    for h in range(H):
        d[h] = ds[:, None] * pi[h]
        ds = np.einsum("sa,sat->t", d[h], mdp.P[h])
    return d


# --- sampling -------------------------------------------------------------------------------------


def _sample_rows(probs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF sampling, one draw per row of `probs` (n, K) with uniforms u (n,)."""
    cdf = np.cumsum(probs, axis=1)
    cdf[:, -1] = 1.0
    return (u[:, None] > cdf).sum(1)


def sample_trajectories(mdp: TabularMDP, pi: np.ndarray, n: int, rng: np.random.Generator):
    """n i.i.d. trajectories of pi: states (n, H), actions (n, H), Bernoulli step rewards (n, H)."""
    H = mdp.H
    states = np.zeros((n, H), dtype=int)
    actions = np.zeros((n, H), dtype=int)
    rewards = np.zeros((n, H))
    s = _sample_rows(np.broadcast_to(mdp.rho, (n, mdp.S)), rng.random(n))
    for h in range(H):
        a = _sample_rows(pi[h, s], rng.random(n))
        states[:, h], actions[:, h] = s, a
        rewards[:, h] = rng.random(n) < mdp.R[h, s, a]
        if h + 1 < H:
            s = _sample_rows(mdp.P[h, s, a], rng.random(n))
    return states, actions, rewards


def monte_carlo_value(mdp: TabularMDP, pi: np.ndarray, n: int, rng: np.random.Generator) -> tuple[float, float]:
    """Monte Carlo estimate of V^pi(rho) and its standard error (the reference of the exact evaluator)."""
    _, _, rewards = sample_trajectories(mdp, pi, n, rng)
    returns = rewards.sum(1)
    return float(returns.mean()), float(returns.std(ddof=1) / np.sqrt(n))
