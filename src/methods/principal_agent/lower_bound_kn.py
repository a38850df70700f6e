"""The K and N dependence of the lower bound for known greedy responses (Table 1 row (b):
Omega(min{sqrt(K T log N), K sqrt(T)}) up to log K), on a hidden-subset family of our own (the paper's
hard family could not be read).

Construction (K types, K even; N arms). Arm 0 is every type's default (mu_{j,0} = 1/2, v_0 = 0). Arm
i >= 1 carries a balanced subset S_i of K/2 types: mu_{j,i} = 1/2 - delta for j in S_i and 0 otherwise,
v_i = 1/2. The incentive delta e_i moves exactly the types of S_i to arm i (a tie, broken in the
principal's favour: model.greedy_response), so its utility vector is z^i = (1/2 - delta) 1_{S_i}; every
other single-arm incentive is dominated (it moves the same types at a higher price, or everyone at
utility 0). The subsets are distinct, so the merged candidates are the zero incentive and
M = min(N - 1, C(K, K/2)) serving incentives. The zero incentive (z = 0) is dominated type by type and is
dropped (`undominated`: with known responses no arrival sequence makes it better), which leaves a
K-dimensional linear bandit with M actions whose gaps are all of order eps.

Hidden parameter: one index i* in [M]. Types arrive i.i.d. with q_j = (1 + eps s_j) / K, s_j = +1 on
S_{i*} and -1 off it. Candidate i then earns (1/2 - delta) (1/2 + eps (2 |S_i & S_{i*}| - K/2) / K):
i* beats a typical other candidate by about (1/2 - delta) eps / 2 per round. One round's observation
(the utility, i.e. whether j_t lies in S_i) carries KL of order eps^2 / K about i* against another
hypothesis, so with eps = c sqrt(K log M / T) the T rounds carry about c^2 log M nats, too few to find
i* among M hypotheses (Fano) for small c: the pseudo-regret is then of order
T eps = c sqrt(K T log M), and log M ~ min{log N, K log 2 - log(K) / 2}: the bound's two regimes.

Regret is the pseudo-regret sum_t sum_a P_t(a) (E U(best) - E U(a)) of the paper's learner
(Exp3-linear on the merged candidates), averaged over runs with i* drawn uniformly; as the claims'
null, the exact pseudo-regret T * mean_a gap(a) of uniform play over the same candidates (a learner
that learns nothing) on the same runs.
"""

from __future__ import annotations

import itertools

import numpy as np

from . import candidates as C
from .analysis import loglog_slope
from .learners import Exp3Linear
from .model import Instance, greedy_utility


def paper_bound(K: int, N: int, T: int) -> float:
    """min{sqrt(K T log N), K sqrt(T)} (Table 1 row (b), without its constant)."""
    return float(min(np.sqrt(K * T * np.log(N)), K * np.sqrt(T)))


def balanced_subsets(K: int, n: int, rng: np.random.Generator) -> list[tuple[int, ...]]:
    """n subsets of size K/2 of [K], distinct while C(K, K/2) allows (then repeated cyclically)."""
    if K < 2 or K % 2:
        raise ValueError(f"the subset family needs an even number of types K >= 2, got K = {K}")
    allsets = list(itertools.combinations(range(K), K // 2))
    order = rng.permutation(len(allsets))
    return [allsets[order[i % len(allsets)]] for i in range(n)]


def subset_instance(K: int, N: int, delta: float, rng: np.random.Generator) -> tuple[Instance, list]:
    """The instance of the module docstring and the subsets S_1..S_{N-1} of its arms."""
    subsets = balanced_subsets(K, N - 1, rng)
    mu = np.zeros((K, N))
    mu[:, 0] = 0.5
    for i, S in enumerate(subsets, start=1):
        mu[list(S), i] = 0.5 - delta
    v = np.full(N, 0.5)
    v[0] = 0.0
    return Instance(mu=mu, v=v), subsets


def undominated(table: np.ndarray) -> np.ndarray:
    """Rows of a utility table (k, K) not weakly dominated type by type by another row.

    With known responses a candidate whose utility is <= another's for every type is never better for any
    arrival sequence, so a learner may drop it (here: the zero incentive, z = 0 <= z^i).
    """
    keep = []
    for m in range(len(table)):
        dominated = np.any(np.all(table >= table[m], axis=1) & np.any(table > table[m], axis=1))
        if not dominated:
            keep.append(m)
    return table[keep]


def hidden_type_probabilities(table: np.ndarray, hidden: np.ndarray, eps: float) -> np.ndarray:
    """q (R, K) for hidden serving candidates `hidden` (R,): (1 + eps) / K on the served types, (1 - eps) / K off.

    table (k, K) is the merged candidates' utility table; a candidate's served types are its positive entries.
    """
    served = table[hidden] > 0  # (R, K)
    K = table.shape[1]
    return (1.0 + eps * np.where(served, 1.0, -1.0)) / K


def _tiled_exp3_linear(features: np.ndarray, T: int, n_runs: int) -> Exp3Linear:
    """Exp3-linear for n_runs identical runs: the design is computed once and the state tiled."""
    one = Exp3Linear([features], np.array([T]))
    for name in ("X", "design", "pad", "eta", "gamma", "S", "rank", "n_actions", "horizons", "valid"):
        setattr(one, name, np.repeat(getattr(one, name), n_runs, axis=0))
    return one


def pseudo_regret_hidden(table: np.ndarray, q: np.ndarray, T: int, rng: np.random.Generator) -> np.ndarray:
    """Pseudo-regret of Exp3-linear after T rounds, one run per row of q (R, K); table (k, K)."""
    R = len(q)
    mean = q @ table.T  # (R, k)
    gap = mean.max(axis=1, keepdims=True) - mean
    learner = _tiled_exp3_linear(table, T, R)
    cum = np.cumsum(q, axis=1)
    regret = np.zeros(R)
    for _ in range(T):
        P = learner.probs(R)
        regret += (P * gap).sum(axis=1)
        a = learner.sample(rng, P)
        j = np.minimum((cum < rng.uniform(size=(R, 1))).sum(axis=1), table.shape[1] - 1)
        learner.update(R, a, table[a, j], P)
    return regret


def kn_grid_experiment(
    types: list[int], arms: list[int], horizon: int, n_runs: int, c: float, delta: float, seed: int
) -> dict:
    """Mean pseudo-regret of Exp3-linear on the subset family for every (K, N) of the grid at one T."""
    rows = []
    for ki, K in enumerate(types):
        for ni, N in enumerate(arms):
            rng = np.random.default_rng([seed, 7, ki, ni])
            inst, _ = subset_instance(K, N, delta, rng)
            table = undominated(greedy_utility(inst, C.known_greedy_candidates(inst, merge=True)))  # (M, K)
            M = len(table)
            serving = np.arange(M)
            eps = float(min(0.5, c * np.sqrt(K * np.log(max(M, 2)) / horizon)))
            hidden = serving[rng.integers(0, M, size=n_runs)]
            q = hidden_type_probabilities(table, hidden, eps)
            regret = pseudo_regret_hidden(table, q, horizon, rng)
            mean = q @ table.T
            uniform = horizon * (mean.max(axis=1, keepdims=True) - mean).mean()
            bound = paper_bound(K, N, horizon)
            rows.append(
                {
                    "K": K,
                    "N": N,
                    "M": M,
                    "n_candidates": int(len(table)),
                    "eps": eps,
                    "regret": float(regret.mean()),
                    "regret_se": float(regret.std(ddof=1) / np.sqrt(n_runs)),
                    "regret_uniform": float(uniform),
                    "bound": bound,
                    "ratio": float(regret.mean() / bound),
                }
            )
    bnd = np.array([r["bound"] for r in rows])
    out = {
        "types": types,
        "arms": arms,
        "horizon": horizon,
        "n_runs": n_runs,
        "c": c,
        "delta": delta,
        "seed": seed,
        "rows": rows,
    }
    for suffix, key in (("", "regret"), ("_uniform", "regret_uniform")):
        reg = np.array([r[key] for r in rows])
        ratio = reg / bnd
        out.update(
            {
                f"slope_on_bound{suffix}": loglog_slope(bnd, reg),
                f"ratio_spread{suffix}": float(ratio.max() / ratio.min()),
                f"ratio_min{suffix}": float(ratio.min()),
                f"ratio_max{suffix}": float(ratio.max()),
            }
        )
    return out


def hidden_subset_job(params: dict, seeds: list[int], out_json: str) -> None:
    """Step principal_agent_hidden_subset: the K x N grid for every seed, written as one JSON {"runs": [...]}."""
    from methods.common.io import log, write_json

    runs = []
    for seed in seeds:
        out = kn_grid_experiment(
            list(params["types"]),
            list(params["arms"]),
            int(params["horizon"]),
            int(params["n_runs"]),
            float(params["c"]),
            float(params["delta"]),
            seed,
        )
        for r in out["rows"]:
            log(
                f"seed {seed} K={r['K']} N={r['N']} M={r['M']} eps={r['eps']:.3f}: regret {r['regret']:.2f} "
                f"+- {r['regret_se']:.2f} (uniform play {r['regret_uniform']:.2f}), bound {r['bound']:.1f}, "
                f"ratio {r['ratio']:.3f}"
            )
        log(
            f"seed {seed}: slope of regret on the bound {out['slope_on_bound']:.3f} (uniform play "
            f"{out['slope_on_bound_uniform']:.3f}), ratio spread {out['ratio_spread']:.3f} "
            f"(uniform play {out['ratio_spread_uniform']:.3f})"
        )
        runs.append(out)
    write_json(out_json, {"seeds": list(seeds), "runs": runs})
