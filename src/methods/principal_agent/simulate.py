"""Playing a learner against an adversary, batched over runs, with exact regret bookkeeping.

A game gives, for each run r, the expected utility table E[U(pi_a, j)] of its actions (R, K, k) and
a sampler of the realised utility (greedy agents: the same number; smooth agents: a random arm).
The learner sees only the realised utility (bandit feedback). We book the learner's conditional
expected utility sum_t sum_a P_t(a) E[U(pi_a, j_t)], which has the same expectation as the realised
one and less noise, and the type counts n_j; the regret against the best fixed incentive in
hindsight is then max_pi sum_j n_j E[U(pi, j)] - booked utility (see `regret`), with the max taken
over the whole decision set, not over the learner's actions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .adversaries import Adversary
from .learners import Learner

PAD_UTILITY = -1e6  # utility of a padded (non-existent) action: never the best, probability zero


@dataclass
class Game:
    """expected (R, K_max, k_max): E[U(action a, type j)]; sample(rng, j, a, m) -> realised U (m,), or None (deterministic)."""

    expected: np.ndarray
    sample: Callable[[np.random.Generator, np.ndarray, np.ndarray, int], np.ndarray] | None = None


def play(learner: Learner, game: Game, adversary: Adversary, rng: np.random.Generator) -> dict:
    """Run every run to its own horizon; returns booked expected utility (R,), realised utility (R,), counts (R, K)."""
    R, K, _ = game.expected.shape
    horizons = learner.horizons
    T_max = int(horizons.max())
    active = np.searchsorted(-horizons, -np.arange(T_max), side="left")  # runs with horizon > t
    booked, realised = np.zeros(R), np.zeros(R)
    counts = np.zeros((R, K), dtype=np.int64)
    last_utility = None
    for t in range(T_max):
        m = int(active[t])
        rows = np.arange(m)
        P = learner.probs(m)
        j = adversary.types(t, m, None if last_utility is None else last_utility[:m])
        a = learner.sample(rng, P)
        table = game.expected[rows, j]  # (m, k): E[U(., j_t)] for each run
        booked[:m] += (P * table).sum(axis=1)
        u = table[rows, a] if game.sample is None else game.sample(rng, j, a, m)
        realised[:m] += u
        counts[rows, j] += 1
        learner.update(m, a, u, P)
        if adversary.kind == "adaptive":
            last_utility = game.expected[rows, :, a]  # (m, K): U(pi_{t-1}, j)
    return {"booked": booked, "realised": realised, "counts": counts}


def best_fixed_value(table: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """max_a sum_j n_j table[j, a] for each run: table (R, K, k) over a set containing the optimum; (R,).

    Padded actions carry PAD_UTILITY (never the max), padded types have zero counts.
    """
    return np.einsum("rk,rka->ra", counts.astype(float), table).max(axis=1)


def regret(best_value: np.ndarray, booked: np.ndarray) -> np.ndarray:
    """R_T = max_pi sum_t E[U(pi, j_t)] - sum_t E_t[U(pi_t, j_t)]."""
    return best_value - booked
