"""From regret records to rates: log-log slopes with bootstrap intervals, and the bounds' own exponents.

A slope is the least-squares slope of log(mean regret over seeds) against log(x) (x = T, N or K); its
interval is the percentile interval of that slope when the seeds are resampled with replacement
(the seeds are the independent replicates; the points of one seed share an instance).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from .candidates import lipschitz_step


def table(records: list[dict], x: str, where: dict, value: str = "regret") -> tuple[np.ndarray, list[int], np.ndarray]:
    """Regrets (or another record field, `value`) of the records matching `where` as (x values, seeds,
    array (S, P))."""
    rows = [r for r in records if all(r[k] == v for k, v in where.items())]
    if not rows:
        raise ValueError(f"no records with {where}; available: {sorted({tuple(r[k] for k in where) for r in records})}")
    xs = sorted({r[x] for r in rows})
    seeds = sorted({r["seed"] for r in rows})
    cell = {(r["seed"], r[x]): r[value] for r in rows}
    missing = [(s, v) for s in seeds for v in xs if (s, v) not in cell]
    if missing:
        raise ValueError(f"records with {where} miss (seed, {x}) = {missing[:5]}")
    return np.array(xs, float), seeds, np.array([[cell[(s, v)] for v in xs] for s in seeds])


def loglog_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of log y against log x; NaN unless every y is positive."""
    if len(x) < 2 or np.any(~np.isfinite(y)) or np.any(y <= 0):
        return float("nan")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def slope_with_interval(x: np.ndarray, per_seed: np.ndarray, n_boot: int, level: float, seed: int = 0) -> dict:
    """Slope of the seed-mean curve and its bootstrap percentile interval (seeds resampled)."""
    slope = loglog_slope(x, per_seed.mean(axis=0))
    rng = np.random.default_rng(seed)
    S = per_seed.shape[0]
    boots = np.array([loglog_slope(x, per_seed[rng.integers(0, S, S)].mean(axis=0)) for _ in range(n_boot)])
    boots = boots[np.isfinite(boots)]
    if len(boots) < max(10, n_boot // 2) or S < 2:
        lo = hi = float("nan")
    else:
        lo, hi = (float(v) for v in np.quantile(boots, [(1 - level) / 2, (1 + level) / 2]))
    return {
        "slope": slope,
        "lo": lo,
        "hi": hi,
        "x": x.tolist(),
        "mean": per_seed.mean(axis=0).tolist(),
        "std": per_seed.std(axis=0, ddof=1).tolist() if S > 1 else [0.0] * len(x),
    }


def exp3_linear_bound(T, rank, k):
    """Lattimore & Szepesvari Thm 27.1: 2 sqrt(3 d T log k) (d: dimension of the features' span)."""
    return 2.0 * np.sqrt(3.0 * np.asarray(rank) * np.asarray(T) * np.log(np.maximum(np.asarray(k), 2)))


def lipschitz_bound(T, n_actions, n_arms, lipschitz):
    """Smooth model, in the principal's utility units: 2 (4 sqrt(n T) + 1) (Tsallis-INF on losses (1 - U)/2)
    plus the discretisation error (2L + 1) eps T of the paper's eps-grid."""
    T, n = np.asarray(T, float), np.asarray(n_actions, float)
    eps = np.array([lipschitz_step(n_arms, lipschitz, int(t)) for t in np.atleast_1d(T)]).reshape(T.shape)
    return 2.0 * (4.0 * np.sqrt(n * T) + 1.0) + (2 * lipschitz + 1) * eps * T


def per_seed_max_ratio(records: list[dict], bound_fn) -> list[float]:
    """For every seed, max over the horizons of regret / bound(record)."""
    by_seed = defaultdict(list)
    for r in records:
        by_seed[r["seed"]].append(r["regret"] / bound_fn(r))
    return [float(max(v)) for _, v in sorted(by_seed.items())]


def per_seed_at(records: list[dict], T: int, value_fn) -> list[float]:
    """value_fn(record) for the records at horizon T, ordered by seed."""
    rows = sorted((r for r in records if r["T"] == T), key=lambda r: r["seed"])
    return [float(value_fn(r)) for r in rows]


def bound_exponent(records: list[dict], x: str, value_fn) -> float:
    """Slope in log-log of the seed-mean of value_fn(record) against x: the exponent the bound predicts."""
    by_x = defaultdict(list)
    for r in records:
        by_x[r[x]].append(value_fn(r))
    xs = np.array(sorted(by_x), float)
    return loglog_slope(xs, np.array([np.mean(by_x[v]) for v in sorted(by_x)]))


def rate_fit(x: np.ndarray, per_seed: np.ndarray, n_boot: int, level: float, seed: int = 0) -> dict:
    """A rate's exponent with what a reviewer checks: `slope_with_interval` on the whole grid, the same fit
    with each grid point left out (slopes `loo_min`/`loo_max`; `loo_lo_max`/`loo_hi_min`: the largest lower
    and smallest upper end of the left-out fits' intervals, so an interval condition that holds on these holds
    on every left-out fit), and `seeds`: each seed's own log-log slope (a seed is an independent instance
    draw), the per-draw values a paired margin over seeds needs."""
    full = slope_with_interval(x, per_seed, n_boot, level, seed)
    if len(x) < 3:  # leaving a point out of two leaves no slope
        loo = [full]
    else:
        loo = [
            slope_with_interval(np.delete(x, i), np.delete(per_seed, i, axis=1), n_boot, level, seed)
            for i in range(len(x))
        ]
    return {
        **full,
        "seeds": [loglog_slope(x, row) for row in per_seed],
        "loo_min": float(min(c["slope"] for c in loo)),
        "loo_max": float(max(c["slope"] for c in loo)),
        "loo_lo_max": float(max(c["lo"] for c in loo)),
        "loo_hi_min": float(min(c["hi"] for c in loo)),
    }


def log_tolerance(T_min: float, log_power: float) -> float:
    """How much a factor (log T)^p lifts the local log-log exponent of a bound, at the grid's smallest T: p / ln T.
    The allowance of a rate written O~(T^a) (hidden log factors); zero for a bound with no log T factor."""
    return float(log_power / np.log(T_min))
