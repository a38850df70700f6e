"""Smooth responses with general incentives (Table 1 row (e): regret O~(L^{N/(N+2)} T^{(N+1)/(N+2)})):
an adaptive-discretisation ("zooming") learner against an adaptive adversary.

The paper's algorithm for this row is named AdversarialZooming (a third-party survey; the body of the
paper, and so its pseudocode, could not be read). This module is the project's reading of adversarial
zooming (Podimata & Slivkins 2021) on the incentive cube [0, 1]^N:

- the active arms are the cells of a dyadic partition of [0, 1]^N (cell side r = 2^-depth), starting
  from the whole cube;
- each round EXP3 (losses (1 - U) / 2, importance weighted, eta_t = sqrt(2 log(A + 1) / (A t)) with A
  the number of active cells) picks a cell, and the principal posts an incentive drawn uniformly from it;
- a cell whose accumulated selection probability n_C reaches split_constant / (L r)^2 (its confidence
  radius 1 / sqrt(n_C) has fallen below the utility's variation L r over the cell) is split into its
  2^N children (down to `max_depth`, a safety cap); the children share the parent's probability (each
  starts at the parent's weight / 2^N). Cells the learner plays often -- where the utility is high
  against the arrivals -- are refined, the rest stay coarse. The learner needs no horizon (anytime): if
  it played uniformly, a cell of side r would split after about (A / (L r)^2) rounds, so the number of
  cells grows like (L^2 t)^{N/(N+2)} ... and EXP3's sqrt(t A) gives the row's t^{(N+1)/(N+2)}.
With `adaptive=False` the learner starts from the uniform partition at side 2^-round(log2(T) / (N + 2))
(the T-tuned eps-grid, eps ~ T^{-1/(N+2)}) and never splits: the fixed-discretisation baseline.
`uniform_play_regret` is the claims' null: incentives drawn uniformly from [0, 1]^N every round (a learner
that learns nothing) against the same adaptive adversary.

Agents respond with the logit model (model.logit_probabilities, L = 1 / temperature) to the general
incentive; the adversary is adversaries.Adversary('adaptive'): with probability adaptive_prob it sends
the type for which the learner's last incentive paid least. Regret is measured against the best fixed
incentive in hindsight on a fine grid of [0, 1]^N, with expected utilities over the agent's logit noise
(the type sequence is the realised, adaptive one).
"""

from __future__ import annotations

import itertools

import numpy as np

from .adversaries import Adversary
from .analysis import loglog_slope
from .model import Instance, expected_utility, logit_probabilities, random_instance


def rate_exponent(n_arms: int) -> float:
    """(N + 1) / (N + 2): the T exponent of row (e)."""
    return (n_arms + 1) / (n_arms + 2)


def grid_depth(n_arms: int, horizon: int) -> int:
    """Depth of the T-tuned uniform baseline: side 2^-depth ~ T^{-1/(N+2)} (nearest dyadic)."""
    return max(1, int(round(np.log2(horizon) / (n_arms + 2))))


class ZoomingLearner:
    """EXP3 over the cells of an adaptive dyadic partition of [0, 1]^N (see the module docstring)."""

    def __init__(
        self, n_arms: int, lipschitz: float, split_constant: float, max_depth: int = 10, fixed_depth: int | None = None
    ):
        self.N = n_arms
        self.scale = split_constant / lipschitz**2
        self.adaptive = fixed_depth is None
        self.max_side = 2.0**-max_depth
        side = 1.0 if self.adaptive else 2.0**-fixed_depth
        m = int(round(1.0 / side))
        self.lower = np.array(list(itertools.product(range(m), repeat=n_arms)), float) * side  # (A, N)
        self.side = np.full(len(self.lower), side)
        self.S = np.zeros(len(self.lower))  # minus cumulative estimated loss
        self.mass = np.zeros(len(self.lower))  # accumulated selection probability since activation
        self.t = 0
        self.splits = 0

    def probs(self) -> np.ndarray:
        self.t += 1
        A = len(self.S)
        self.eta = np.sqrt(2.0 * np.log(A + 1) / (A * self.t))
        s = self.eta * self.S
        p = np.exp(s - s.max())
        return p / p.sum()

    def act(self, rng: np.random.Generator) -> tuple[int, np.ndarray, np.ndarray]:
        """(cell, incentive in that cell, the probabilities used)."""
        p = self.probs()
        c = int(min(np.searchsorted(np.cumsum(p), rng.uniform() * p.sum()), len(p) - 1))
        x = self.lower[c] + self.side[c] * rng.uniform(size=self.N)
        return c, x, p

    def update(self, cell: int, utility: float, p: np.ndarray) -> None:
        loss = (1.0 - utility) / 2.0
        self.S[cell] -= loss / p[cell]
        self.mass += p
        if self.adaptive:
            self._zoom()

    def _zoom(self) -> None:
        ready = (self.mass >= self.scale / self.side**2) & (self.side > self.max_side * (1 + 1e-9))
        for c in np.nonzero(ready)[0][::-1]:  # from the back, so that earlier indices stay valid
            self._split(int(c))

    def _split(self, c: int) -> None:
        half = self.side[c] / 2
        offsets = np.array(list(itertools.product((0.0, half), repeat=self.N)))
        n_child = len(offsets)
        # each child gets weight w_parent / 2^N at the current eta: S_child = S_parent - log(2^N) / eta
        s_child = self.S[c] - np.log(n_child) / self.eta
        keep = np.arange(len(self.S)) != c
        self.lower = np.vstack([self.lower[keep], self.lower[c] + offsets])
        self.side = np.concatenate([self.side[keep], np.full(n_child, half)])
        self.S = np.concatenate([self.S[keep], np.full(n_child, s_child)])
        self.mass = np.concatenate([self.mass[keep], np.zeros(n_child)])
        self.splits += 1

    def depth_at(self, x: np.ndarray) -> int:
        """Depth of the active cell containing the point x (N,)."""
        inside = np.all((self.lower <= x + 1e-12) & (x < self.lower + self.side[:, None] + 1e-12), axis=1)
        return int(np.round(-np.log2(self.side[np.nonzero(inside)[0][0]])))


def hindsight_grid(n_arms: int, points: int) -> np.ndarray:
    """The comparator set: a uniform grid of points^N general incentives in [0, 1]^N."""
    g = np.linspace(0.0, 1.0, points)
    return np.array(list(itertools.product(g, repeat=n_arms)))


def utilities(inst: Instance, pi: np.ndarray, temperature: float) -> np.ndarray:
    """Expected principal utility (M, K) of general incentives pi (M, N) under logit responses."""
    return expected_utility(logit_probabilities(inst, pi, temperature), inst.v, pi)


def run_once(
    inst: Instance,
    checkpoints: list[int],
    temperature: float,
    split_constant: float,
    fixed_depth: int | None,
    adaptive_prob: float,
    grid_u: np.ndarray,
    rng: np.random.Generator,
) -> dict:
    """One run against the adaptive adversary; regret vs the best grid incentive in hindsight at each checkpoint."""
    K, N = inst.n_types, inst.n_arms
    horizon = max(checkpoints)
    learner = ZoomingLearner(N, 1.0 / temperature, split_constant, fixed_depth=fixed_depth)
    adversary = Adversary("adaptive", np.array([K]), horizon, rng, adaptive_prob=adaptive_prob)
    counts = np.zeros(K)
    earned = 0.0
    last = None
    regret, cells = [], []
    for t in range(1, horizon + 1):
        j = int(adversary.types(t - 1, 1, last)[0])
        cell, x, p = learner.act(rng)
        z = (inst.mu + x[None, :]) / temperature
        probs = np.exp(z - z.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)  # (K, N) logit responses
        u_all = probs @ (inst.v - x)  # (K,) expected utility of x against every type
        arm = int(min(np.searchsorted(np.cumsum(probs[j]), rng.uniform()), N - 1))
        learner.update(cell, inst.v[arm] - x[arm], p)
        counts[j] += 1
        earned += u_all[j]
        last = u_all[None, :]
        if t in checkpoints:
            regret.append(float((grid_u @ counts).max() - earned))
            cells.append(int(len(learner.S)))
    return {
        "regret": regret,
        "n_cells": cells,
        "splits": learner.splits,
        "max_depth": int(np.round(-np.log2(learner.side.min()))),
        "learner": learner,
    }


def uniform_play_regret(
    inst: Instance,
    checkpoints: list[int],
    temperature: float,
    adaptive_prob: float,
    grid_u: np.ndarray,
    rng: np.random.Generator,
) -> list[float]:
    """Regret at each checkpoint of uniform random incentives against the adaptive adversary (vectorised:
    the incentives do not depend on the past, so the whole type sequence follows from them)."""
    K, N = inst.n_types, inst.n_arms
    horizon = max(checkpoints)
    u_all = utilities(inst, rng.uniform(size=(horizon, N)), temperature)  # (T, K)
    react = rng.uniform(size=horizon) < adaptive_prob
    react[0] = False  # no previous incentive to react to
    worst = np.r_[0, u_all[:-1].argmin(axis=1)]
    j = np.where(react, worst, rng.integers(0, K, size=horizon))
    earned = np.cumsum(u_all[np.arange(horizon), j])
    return [float((grid_u @ np.bincount(j[:t], minlength=K)).max() - earned[t - 1]) for t in checkpoints]


def zooming_experiment(
    n_types: int,
    n_arms: int,
    horizons: list[int],
    n_runs: int,
    temperature: float,
    split_constant: float,
    adaptive_prob: float,
    grid_points: int,
    seed: int,
) -> dict:
    """Regret over the T grid of the zooming learner (anytime: one run, read at every T), of the T-tuned
    uniform baseline (one run per T) and of uniform play (the null); one random instance per seed."""
    inst = random_instance(np.random.default_rng([seed, 11]), n_types, n_arms)
    grid_u = utilities(inst, hindsight_grid(n_arms, grid_points), temperature)
    out = {
        "n_types": n_types,
        "n_arms": n_arms,
        "horizons": horizons,
        "n_runs": n_runs,
        "temperature": temperature,
        "lipschitz": 1.0 / temperature,
        "split_constant": split_constant,
        "adaptive_prob": adaptive_prob,
        "seed": seed,
        "rate_exponent": rate_exponent(n_arms),
        "learners": {},
    }
    h = np.array(horizons, float)
    zoom = [
        run_once(
            inst,
            horizons,
            temperature,
            split_constant,
            None,
            adaptive_prob,
            grid_u,
            np.random.default_rng([seed, 12, 0, r]),
        )
        for r in range(n_runs)
    ]
    base = [
        [
            run_once(
                inst,
                [T],
                temperature,
                split_constant,
                grid_depth(n_arms, T),
                adaptive_prob,
                grid_u,
                np.random.default_rng([seed, 12, 1, ti, r]),
            )
            for r in range(n_runs)
        ]
        for ti, T in enumerate(horizons)
    ]
    results = {
        "zooming": (np.mean([r["regret"] for r in zoom], axis=0), np.mean([r["n_cells"] for r in zoom], axis=0)),
        "uniform_grid": (
            np.array([np.mean([r["regret"][0] for r in runs]) for runs in base]),
            np.array([np.mean([r["n_cells"][0] for r in runs]) for runs in base]),
        ),
        "uniform_play": (
            np.mean(
                [
                    uniform_play_regret(
                        inst, horizons, temperature, adaptive_prob, grid_u, np.random.default_rng([seed, 12, 2, r])
                    )
                    for r in range(n_runs)
                ],
                axis=0,
            ),
            np.ones(len(horizons)),
        ),
    }
    for name, (regret, cells) in results.items():
        out["learners"][name] = {
            "regret": regret.tolist(),
            "n_cells": cells.tolist(),
            "slope": loglog_slope(h, regret),
            "regret_min": float(regret.min()),
        }
    return out


def zooming_job(params: dict, seeds: list[int], out_json: str) -> None:
    """Step principal_agent_zooming: the experiment for every seed, written as one JSON {"runs": [...]}."""
    from methods.common.io import log, write_json

    runs = []
    for seed in seeds:
        out = zooming_experiment(
            int(params["n_types"]),
            int(params["n_arms"]),
            list(params["horizons"]),
            int(params["n_runs"]),
            float(params["temperature"]),
            float(params["split_constant"]),
            float(params["adaptive_prob"]),
            int(params["grid_points"]),
            seed,
        )
        for name, r in out["learners"].items():
            log(
                f"seed {seed} {name}: regret {np.round(r['regret'], 1).tolist()} over T {out['horizons']}, "
                f"slope {r['slope']:.3f} (rate {out['rate_exponent']:.3f}), cells {r['n_cells']}"
            )
        runs.append(out)
    write_json(out_json, {"seeds": list(seeds), "runs": runs})
