"""Arrival sequences of agent types, batched over R independent runs.

Oblivious adversaries fix the whole sequence in advance (paper Section 2: the order is adversarial,
the principal never sees the type): `blocked` (runs of one type, a fresh random type per block),
`periodic` (a random pattern repeated), `random` (i.i.d. types from a per-run random mixture).
The `adaptive` adversary reacts to the learner's past choices: with probability `adaptive_prob` it
sends the type for which the incentive the learner chose last round pays the principal least,
otherwise a uniformly random type.

All adversaries draw from their own generator and only for the runs still active, so a run's
sequence does not depend on the learner's randomness except through the adaptive rule.
"""

from __future__ import annotations

import numpy as np

KINDS = ("blocked", "periodic", "random", "adaptive")


class Adversary:
    """Types j_t for runs 0..m-1 at round t; each run r has n_types[r] real types (padded up to K_max)."""

    def __init__(
        self,
        kind: str,
        n_types: np.ndarray,
        horizon: int,
        rng: np.random.Generator,
        block_length: int = 100,
        period: int = 7,
        adaptive_prob: float = 0.5,
    ):
        if kind not in KINDS:
            raise ValueError(f"adversary {kind!r} unknown; available: {list(KINDS)}")
        self.kind, self.rng = kind, rng
        self.n_types = np.asarray(n_types, int)
        R = len(self.n_types)
        self.block_length, self.adaptive_prob = int(block_length), float(adaptive_prob)
        if kind == "blocked":
            n_blocks = horizon // self.block_length + 1
            self.blocks = self._uniform_types((R, n_blocks))
        elif kind == "periodic":
            self.pattern = self._uniform_types((R, int(period)))
        elif kind == "random":
            k_max = self.n_types.max()
            w = rng.gamma(1.0, size=(R, k_max)) * (np.arange(k_max)[None, :] < self.n_types[:, None])
            self.cum = np.cumsum(w / w.sum(axis=1, keepdims=True), axis=1)

    def _uniform_types(self, shape) -> np.ndarray:
        u = self.rng.uniform(size=shape)
        return np.minimum(
            (u * self.n_types.reshape((-1,) + (1,) * (len(shape) - 1))).astype(int),
            self.n_types.reshape((-1,) + (1,) * (len(shape) - 1)) - 1,
        )

    def types(self, t: int, m: int, last_utility: np.ndarray | None) -> np.ndarray:
        """j_t for runs 0..m-1. last_utility (m, K_max): U(pi_{t-1}, j) of the learner's previous choice."""
        if self.kind == "blocked":
            return self.blocks[:m, t // self.block_length]
        if self.kind == "periodic":
            return self.pattern[:m, t % self.pattern.shape[1]]
        if self.kind == "random":
            u = self.rng.uniform(size=(m, 1))
            return np.minimum((self.cum[:m] < u).sum(axis=1), self.n_types[:m] - 1)
        # adaptive
        uniform = np.minimum((self.rng.uniform(size=m) * self.n_types[:m]).astype(int), self.n_types[:m] - 1)
        if last_utility is None:
            return uniform
        masked = np.where(np.arange(last_utility.shape[1])[None, :] < self.n_types[:m, None], last_utility, np.inf)
        react = self.rng.uniform(size=m) < self.adaptive_prob
        return np.where(react, masked.argmin(axis=1), uniform)
