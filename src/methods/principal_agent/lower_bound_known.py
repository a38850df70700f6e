"""The lower bound for known greedy responses (Table 1 row (b): Omega(min{sqrt(K T log N), K sqrt(T)})
up to log K), its T-dependence shown on a documented construction of our own (the paper's hard
instance family could not be read).

Construction (K = 2 types, N = 3 arms). Arm 0 is every type's default (mu_{j,0} = 1/2, v_0 = 0); type
j in {0, 1} likes arm j + 1 slightly less (mu_{j,j+1} = 1/2 - delta) and the other arm not at all
(mu = 0); v_1 = v_2 = 1/2. The incentive delta e_{j+1} moves exactly type j to arm j + 1 (a tie, broken
in the principal's favour), paying U = 1/2 - delta; no single-arm incentive serves both types at a
profit (moving a type from arm 0 to the other type's arm costs 1/2 = v). Types arrive i.i.d. with
P(type 0) = 1/2 + s eps, s = +-1 hidden, eps = c / sqrt(T): the two serving incentives differ by
2 eps (1/2 - delta) per round, and T rounds carry a constant amount of information (T eps^2 = c^2)
about s, so every algorithm picks the worse one a constant fraction of the time on one of the two
instances: expected pseudo-regret >= const * sqrt(T) (Le Cam's two-point method). Feedback is the
arm the agent pulls, which is the bandit feedback of the reduction.

We measure the pseudo-regret sum_t sum_a P_t(a) (max_b E U(b) - E U(a)) of the paper's learner
(Exp3-linear on the merged candidates) and of EXP3, averaged over the two signs and the seeds, and, as
the claims' null, the exact pseudo-regret T * mean_a gap(a) of uniform play over the same candidates
(a learner that learns nothing).
"""

from __future__ import annotations

import numpy as np

from . import candidates as C
from .analysis import loglog_slope
from .learners import Exp3, Exp3Linear
from .model import Instance, greedy_utility

ALGORITHMS = ("exp3_linear", "exp3_merged")


def two_type_instance(delta: float) -> Instance:
    """The K = 2, N = 3 instance of the module docstring."""
    mu = np.array([[0.5, 0.5 - delta, 0.0], [0.5, 0.0, 0.5 - delta]])
    return Instance(mu=mu, v=np.array([0.0, 0.5, 0.5]))


def type_probabilities(sign: int, eps: float) -> np.ndarray:
    """(P(type 0), P(type 1)) = (1/2 + sign eps, 1/2 - sign eps)."""
    return np.array([0.5 + sign * eps, 0.5 - sign * eps])


def pseudo_regret(
    algorithm: str, table: np.ndarray, q: np.ndarray, T: int, n_runs: int, rng: np.random.Generator
) -> np.ndarray:
    """Pseudo-regret after T rounds of `n_runs` independent runs; table (K, k) = U(candidate, type)."""
    mean = q @ table  # (k,) expected utility of each candidate
    gap = mean.max() - mean
    horizons = np.full(n_runs, T)
    if algorithm == "exp3_linear":
        learner = Exp3Linear([table.T] * n_runs, horizons)
    elif algorithm == "exp3_merged":
        learner = Exp3([table.shape[1]] * n_runs, horizons)
    else:
        raise ValueError(f"lower-bound algorithm {algorithm!r} unknown; available: {list(ALGORITHMS)}")
    regret = np.zeros(n_runs)
    for _ in range(T):
        P = learner.probs(n_runs)
        regret += P @ gap
        a = learner.sample(rng, P)
        j = (rng.uniform(size=n_runs) >= q[0]).astype(int)
        learner.update(n_runs, a, table[j, a], P)
    return regret


def uniform_pseudo_regret(table: np.ndarray, q: np.ndarray, T: int) -> float:
    """Exact pseudo-regret of uniform play over the candidates: T * mean_a (max_b E U(b) - E U(a))."""
    mean = q @ table
    return float(T * (mean.max() - mean).mean())


def _curve(means: list[float], horizons: list[int]) -> dict:
    h = np.array(horizons, float)
    return {
        "regret": means,
        "regret_over_sqrt_T": (np.array(means) / np.sqrt(h)).tolist(),
        "slope": loglog_slope(h, np.array(means)),
    }


def lower_bound_experiment(
    horizons: list[int], n_runs: int, c: float, delta: float, algorithms: list[str], seed: int
) -> dict:
    """Mean pseudo-regret over both signs and `n_runs` runs per sign, for each algorithm and horizon,
    and the exact pseudo-regret of uniform play (`uniform`)."""
    inst = two_type_instance(delta)
    cand = C.known_greedy_candidates(inst, merge=True)
    table = greedy_utility(inst, cand)  # (k, K)
    table = table.T  # (K, k)
    out = {
        "horizons": horizons,
        "c": c,
        "delta": delta,
        "n_runs": n_runs,
        "seed": seed,
        "n_candidates": int(table.shape[1]),
        "table": table.tolist(),
        "algorithms": {},
    }
    for ai, algorithm in enumerate(algorithms):
        means = []
        for ti, T in enumerate(horizons):
            eps = c / np.sqrt(T)
            per_sign = [
                pseudo_regret(
                    algorithm, table, type_probabilities(s, eps), T, n_runs, np.random.default_rng([seed, ai, ti, si])
                )
                for si, s in enumerate((1, -1))
            ]
            means.append(float(np.mean(np.concatenate(per_sign))))
        out["algorithms"][algorithm] = _curve(means, horizons)
    out["uniform"] = _curve(
        [
            float(np.mean([uniform_pseudo_regret(table, type_probabilities(s, c / np.sqrt(T)), T) for s in (1, -1)]))
            for T in horizons
        ],
        horizons,
    )
    return out


def two_point_job(params: dict, seeds: list[int], out_json: str) -> None:
    """Step principal_agent_two_point: the experiment for every seed, written as one JSON {"runs": [...]}."""
    from methods.common.io import log, write_json

    runs = []
    for seed in seeds:
        out = lower_bound_experiment(
            params["horizons"], params["n_runs"], params["c"], params["delta"], params["algorithms"], seed
        )
        for name, r in {**out["algorithms"], "uniform": out["uniform"]}.items():
            log(
                f"seed {seed} {name}: regret {np.round(r['regret'], 2).tolist()} over T {out['horizons']}, "
                f"slope {r['slope']:.3f}"
            )
        runs.append(out)
    write_json(out_json, {"seeds": list(seeds), "runs": runs})
