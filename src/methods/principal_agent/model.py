"""The repeated principal-agent model (paper Section 2): K agent types, N arms, incentives, responses.

Notation follows the paper: type j has a preference vector mu_j in [0,1]^N, the principal a reward
vector v in [0,1]^N. An incentive is a vector pi in [0,1]^N (general incentives); a single-arm
incentive has at most one non-zero entry. The agent picks an arm a(pi, j) and the principal receives
U(pi, j) = v_a - pi_a.

Shapes: incentives are stacked as (M, N); utility tables are (M, K) = U(pi_m, j).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Two utilities closer than this are a tie. It only absorbs floating-point rounding
# (mu_i + (mu_k - mu_i) may differ from mu_k by one ulp); real gaps in the instances are >= 1e-9.
TIE_TOL = 1e-12


@dataclass(frozen=True)
class Instance:
    """Preferences mu (K, N) of the K types and the principal's rewards v (N,)."""

    mu: np.ndarray
    v: np.ndarray

    def __post_init__(self):
        mu, v = np.asarray(self.mu, float), np.asarray(self.v, float)
        assert mu.ndim == 2 and v.shape == (mu.shape[1],), f"mu (K, N) and v (N,) expected, got {mu.shape}, {v.shape}"
        assert mu.min() >= 0 and mu.max() <= 1 and v.min() >= 0 and v.max() <= 1, "mu and v must lie in [0, 1]"
        object.__setattr__(self, "mu", mu)
        object.__setattr__(self, "v", v)

    @property
    def n_types(self) -> int:
        return self.mu.shape[0]

    @property
    def n_arms(self) -> int:
        return self.mu.shape[1]


def random_instance(rng: np.random.Generator, n_types: int, n_arms: int) -> Instance:
    """Preferences and rewards drawn uniformly from [0, 1] (the experiments' generic instance)."""
    return Instance(mu=rng.uniform(size=(n_types, n_arms)), v=rng.uniform(size=n_arms))


def single_arm_incentives(arms: np.ndarray, amounts: np.ndarray, n_arms: int) -> np.ndarray:
    """Stack single-arm incentives amounts[m] * e_{arms[m]} as an (M, N) array."""
    arms, amounts = np.asarray(arms, int), np.asarray(amounts, float)
    pi = np.zeros((len(arms), n_arms))
    pi[np.arange(len(arms)), arms] = amounts
    return pi


def greedy_response(inst: Instance, pi: np.ndarray) -> np.ndarray:
    """Greedy choice model b(pi, j) in argmax_i mu_{j,i} + pi_i, (M, K) arm indices.

    Fixed tie-break: among arms within TIE_TOL of the agent's best utility, the arm with the largest
    principal utility v_i - pi_i, then the lowest index. Breaking ties in the principal's favour makes
    the principal's utility upper semicontinuous in pi, so the best fixed incentive is attained
    (at a candidate incentive, see candidates.py) rather than only approached.
    """
    pi = np.atleast_2d(pi)
    agent = inst.mu[None, :, :] + pi[:, None, :]  # (M, K, N)
    tied = agent >= agent.max(axis=2, keepdims=True) - TIE_TOL
    principal = np.where(tied, (inst.v[None, :] - pi)[:, None, :], -np.inf)  # (M, K, N)
    return principal.argmax(axis=2)  # argmax returns the lowest index among equal values


def greedy_utility(inst: Instance, pi: np.ndarray) -> np.ndarray:
    """U(pi, j) = v_a - pi_a for the greedy response a = b(pi, j); (M, K)."""
    pi = np.atleast_2d(pi)
    arms = greedy_response(inst, pi)
    return inst.v[arms] - np.take_along_axis(pi, arms, axis=1)


def logit_probabilities(inst: Instance, pi: np.ndarray, temperature: float) -> np.ndarray:
    """Smooth choice model: Pr[a(pi, j) = i] = softmax_i((mu_{j,i} + pi_i) / temperature); (M, K, N).

    This is the logit (Gumbel-noise) response the paper mentions as an example of the smooth model.
    Its probability vector moves by at most ||d pi||_inf / temperature in l1 norm (the Jacobian
    (diag p - p p^T) / temperature maps an l_inf ball into an l1 ball of radius 1/temperature, since
    the mean absolute deviation of a [-1, 1]-valued variable is at most 1), so the paper's Lipschitz
    constant is L = 1 / temperature.
    """
    pi = np.atleast_2d(pi)
    s = (inst.mu[None, :, :] + pi[:, None, :]) / temperature
    s -= s.max(axis=2, keepdims=True)
    p = np.exp(s)
    return p / p.sum(axis=2, keepdims=True)


def logit_lipschitz(temperature: float) -> float:
    """The Lipschitz constant L of the logit response (see logit_probabilities)."""
    return 1.0 / temperature


def expected_utility(probs: np.ndarray, v: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """E[U(pi, j)] = sum_i Pr[a = i] (v_i - pi_i) for response probabilities (M, K, N); (M, K)."""
    pi = np.atleast_2d(pi)
    return np.einsum("mkn,mn->mk", probs, v[None, :] - pi)


def lower_bound_instance(threshold: float, window: float) -> Instance:
    """The unknown-response instance with linear regret (paper Theorem 2.1: K = 2 types, N = 3 arms).

    Our construction (the paper's own instance could not be read, see the package docstring):
    type A prefers arm 0 and switches to arm 2 once the incentive on arm 2 reaches `threshold`;
    type B prefers arm 1 and switches to arm 2 at `threshold + window`. The principal values
    arm 0 at 0 and arms 1, 2 at 1, so she wants A on arm 2 and B on arm 1: only incentives on arm 2
    inside the window [threshold, threshold + window] do that. Every other incentive loses at least
    min(1 - threshold, threshold) / 2 per round against balanced arrivals; without knowing the
    responses a learner has no way to find a window of width 1e-9 in T <= 1e5 rounds.
    """
    a, b = threshold, threshold + window
    assert 0 < a < b < 1, "threshold and threshold + window must lie in (0, 1)"
    mu = np.array([[1.0, 0.0, 1.0 - a], [0.0, 1.0, 1.0 - b]])
    return Instance(mu=mu, v=np.array([0.0, 1.0, 1.0]))
