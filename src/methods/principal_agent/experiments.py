"""The simulation experiments: which instances, action sets and learners each one plays.

Each experiment takes a block of seeds and returns one record per (algorithm, N, K, T, seed) with the
regret against the best fixed incentive in hindsight. Runs of one algorithm are batched into one
game loop (runs ordered by decreasing horizon; action sets padded).

- greedy:      known greedy responses, single-arm incentives; Exp3-linear on the merged candidates
               (the paper's algorithm), EXP3 on the raw candidates, EXP3 on the merged candidates,
               EXP3 on a naive uniform grid. Comparator: max over the merged candidates (exact).
- lipschitz:   smooth responses. `logit`: logit agents on random instances; `needle`: a hard family
               whose optimum is a Lipschitz bump of half-width eps_T at a random place (the standard
               construction behind T^{2/3} lower bounds). Learner: Tsallis-INF on the paper's eps-grid.
- lower_bound: unknown greedy responses on model.lower_bound_instance (Theorem 2.1); the
               response-agnostic grid learners against the known-response Exp3-linear.
- multiarm:    known greedy responses, general incentives; Exp3-linear on the polytope vertices.
The needle and multiarm records also carry `regret_uniform`, the regret of uniform play over the same
action set against the same arrivals (a learner that learns nothing): the null of their rate claims.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from methods.common.io import log

from . import candidates as C
from .adversaries import Adversary
from .learners import Exp3, Exp3Linear, TsallisInf
from .model import Instance, greedy_utility, lower_bound_instance, random_instance
from .simulate import PAD_UTILITY, Game, best_fixed_value, play, regret

GREEDY_ALGORITHMS = ("exp3_linear", "exp3_candidates", "exp3_merged", "naive_grid")
LOWER_BOUND_ALGORITHMS = ("naive_grid", "lipschitz", "exp3_linear")


@dataclass
class Run:
    """One (instance, horizon, seed) with the decision set's candidate table used for the comparator."""

    inst: Instance
    N: int
    K: int
    T: int
    seed: int
    optimum_table: np.ndarray  # (K, M): utilities of a finite set that contains a best fixed incentive


def instance_rng(seed: int, *key: int) -> np.random.Generator:
    """The generator of one instance: the same seed and (N, K) give the same instance at every T."""
    return np.random.default_rng([int(seed), *map(int, key)])


def _pad_tables(tables: list[np.ndarray], K_max: int) -> np.ndarray:
    """Stack (K_r, k_r) tables into (R, K_max, k_max): padded actions get PAD_UTILITY, padded types 0."""
    k_max = max(t.shape[1] for t in tables)
    out = np.zeros((len(tables), K_max, k_max))
    for r, t in enumerate(tables):
        out[r, :, t.shape[1] :] = PAD_UTILITY
        out[r, : t.shape[0], : t.shape[1]] = t
    return out


def _order(runs: list[Run]) -> list[Run]:
    return sorted(runs, key=lambda r: -r.T)


def _adversary(kind, runs, rng, adv_params):
    return Adversary(kind, np.array([r.K for r in runs]), max(r.T for r in runs), rng, **adv_params)


def uniform_play_value(tables: list[np.ndarray], counts: np.ndarray) -> np.ndarray:
    """Expected utility of uniform play over each run's actions: sum_j n_j mean_a table[j, a]; tables (K_r, k_r)."""
    return np.array([counts[r, : t.shape[0]] @ t.mean(axis=1) for r, t in enumerate(tables)])


def _records(algorithm, runs, out, best, extra=None):
    reg = regret(best, out["booked"])
    recs = []
    for i, r in enumerate(runs):
        rec = {
            "algorithm": algorithm,
            "N": r.N,
            "K": r.K,
            "T": r.T,
            "seed": r.seed,
            "regret": float(reg[i]),
            "best_value": float(best[i]),
            "booked": float(out["booked"][i]),
            "realised": float(out["realised"][i]),
        }
        if extra:
            rec.update({k: v[i] for k, v in extra.items()})
        recs.append(rec)
    return recs


# --- greedy, single-arm -------------------------------------------------------------------------


def greedy_runs(settings: list[tuple[int, int, int]], seeds: list[int]) -> list[Run]:
    runs = []
    for N, K, T in settings:
        for s in seeds:
            inst = random_instance(instance_rng(s, N, K), K, N)
            best = C.known_greedy_candidates(inst, merge=True)
            runs.append(Run(inst, N, K, T, s, greedy_utility(inst, best).T))
    return _order(runs)


def greedy_action_set(algorithm: str, run: Run) -> np.ndarray:
    """The incentives an algorithm plays on a run (rows of an (M, N) array)."""
    if algorithm in ("exp3_linear", "exp3_merged"):
        return C.known_greedy_candidates(run.inst, merge=True)
    if algorithm == "exp3_candidates":
        return C.known_greedy_candidates(run.inst, merge=False)
    if algorithm == "naive_grid":
        return C.uniform_grid(run.N, C.naive_step(run.N, run.T))
    raise ValueError(f"greedy algorithm {algorithm!r} unknown; available: {list(GREEDY_ALGORITHMS)}")


def never_pay_value(inst: Instance, counts_row: np.ndarray) -> float:
    """Utility of the policy that never pays (incentive 0 every round): sum_j n_j U(0, j), exact."""
    return float(counts_row[: inst.n_types] @ greedy_utility(inst, np.zeros((1, inst.n_arms)))[0])


def trivial_regrets(runs: list[Run], counts: np.ndarray, best: np.ndarray) -> dict:
    """Regret of the trivial policies against the same arrivals (a learner's type counts) and comparator, exact:
    uniform play over the merged candidates (learns nothing) and never paying (incentive 0 every round)."""
    uniform = best - uniform_play_value([r.optimum_table for r in runs], counts)
    never = best - np.array([never_pay_value(r.inst, counts[i]) for i, r in enumerate(runs)])
    return {"regret_uniform": [float(u) for u in uniform], "regret_never_pay": [float(v) for v in never]}


def _ranks(learner, n):
    """Dimension d of each run's feature span (Exp3-linear), else 0."""
    return [int(d) for d in learner.rank] if isinstance(learner, Exp3Linear) else [0] * n


def _greedy_learner(algorithm, tables, horizons):
    if algorithm == "exp3_linear":
        return Exp3Linear([t.T for t in tables], horizons)
    return Exp3([t.shape[1] for t in tables], horizons)


def run_greedy(adversary: str, algorithms: list[str], settings, seeds, adv_params: dict, rng_key: int) -> list[dict]:
    """Known greedy responses under one adversary: every algorithm on every (N, K, T) setting and seed."""
    runs = greedy_runs(settings, seeds)
    K_max = max(r.K for r in runs)
    records = []
    for algorithm in algorithms:
        tables = [greedy_utility(r.inst, greedy_action_set(algorithm, r)).T for r in runs]  # (K, k) each
        game = Game(_pad_tables(tables, K_max))
        learner = _greedy_learner(algorithm, tables, np.array([r.T for r in runs]))
        adv = _adversary(adversary, runs, np.random.default_rng([rng_key, 1]), adv_params)
        out = play(learner, game, adv, np.random.default_rng([rng_key, 2, GREEDY_ALGORITHMS.index(algorithm)]))
        best = best_fixed_value(_pad_tables([r.optimum_table for r in runs], K_max), out["counts"])
        trivial = trivial_regrets(runs, out["counts"], best)
        records += _records(
            algorithm,
            runs,
            out,
            best,
            {"n_actions": [t.shape[1] for t in tables], "rank": _ranks(learner, len(runs)), **trivial},
        )
        log(f"greedy/{adversary}/{algorithm}: {len(runs)} runs, T_max={max(r.T for r in runs)}")
    return records


# --- smooth responses -----------------------------------------------------------------------------


def logit_single_arm_table(inst: Instance, temperature: float, arms: np.ndarray, amounts: np.ndarray) -> np.ndarray:
    """E[U(x e_i, j)] of logit agents for single-arm incentives (arms[m], amounts[m]); (K, M), closed form.

    With e_{jk} = exp(mu_{jk} / tau): only arm i's weight changes, to e_{ji} exp(x / tau), so
    E[U] = (sum_k e_jk v_k - e_ji v_i + e_ji e^{x/tau} (v_i - x)) / (sum_k e_jk - e_ji + e_ji e^{x/tau}).
    """
    e = np.exp((inst.mu - inst.mu.max(axis=1, keepdims=True)) / temperature)  # (K, N)
    S, A = e.sum(axis=1, keepdims=True), (e * inst.v).sum(axis=1, keepdims=True)
    ei, vi = e[:, arms], inst.v[arms][None, :]
    boost = ei * np.exp(np.asarray(amounts)[None, :] / temperature)
    return (A - ei * vi + boost * (vi - amounts)) / (S - ei + boost)


def logit_best_fixed(
    inst: Instance, temperature: float, counts: np.ndarray, grid: int = 2001, refine_steps: int = 60
) -> float:
    """max over single-arm incentives of sum_j n_j E[U(x e_i, j)]: fine grid per arm, then golden section."""
    N = inst.n_arms
    xs = np.linspace(0.0, 1.0, grid)
    arms = np.repeat(np.arange(N), grid)
    vals = counts @ logit_single_arm_table(inst, temperature, arms, np.tile(xs, N))  # (N * grid,)
    best_x = xs[vals.reshape(N, grid).argmax(axis=1)]
    lo, hi = np.maximum(best_x - 1.0 / (grid - 1), 0.0), np.minimum(best_x + 1.0 / (grid - 1), 1.0)
    f = lambda x: counts @ logit_single_arm_table(inst, temperature, np.arange(N), x)  # noqa: E731
    g = (np.sqrt(5) - 1) / 2
    for _ in range(refine_steps):
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        left = f(a) >= f(b)
        hi, lo = np.where(left, b, hi), np.where(left, lo, a)
    return float(max(vals.max(), f((lo + hi) / 2).max()))


class LogitSampler:
    """Realised utility of logit agents for single-arm grid actions (the agent's arm is drawn)."""

    def __init__(self, insts, temperature, arms, amounts):
        self.tau = temperature
        self.logits = np.stack([i.mu for i in insts]) / temperature  # (R, K, N) (K equal over runs)
        self.v = np.stack([i.v for i in insts])  # (R, N)
        self.arms, self.amounts = arms, amounts  # (R, k)

    def __call__(self, rng, j, a, m):
        rows = np.arange(m)
        s = self.logits[rows, j].copy()  # (m, N)
        arm, x = self.arms[rows, a], self.amounts[rows, a]
        s[rows, arm] += x / self.tau
        p = np.exp(s - s.max(axis=1, keepdims=True))
        cum = np.cumsum(p, axis=1)
        pick = np.minimum((cum < rng.uniform(size=(m, 1)) * cum[:, -1:]).sum(axis=1), s.shape[1] - 1)
        return self.v[rows, pick] - np.where(pick == arm, x, 0.0)


def _grid_arms_amounts(grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return grid.argmax(axis=1), grid.max(axis=1)


def _stack_padded(rows: list[np.ndarray], fill=0.0) -> np.ndarray:
    k_max = max(len(r) for r in rows)
    out = np.full((len(rows), k_max), fill, dtype=float)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def run_logit(
    adversary: str, horizons, seeds, N: int, K: int, temperature: float, adv_params: dict, rng_key: int
) -> list[dict]:
    """Tsallis-INF on the eps-grid (eps tuned with L = 1/temperature) against logit agents."""
    L = 1.0 / temperature
    runs = _order(
        [Run(random_instance(instance_rng(s, N, K), K, N), N, K, int(T), s, None) for T in horizons for s in seeds]
    )
    grids = [C.uniform_grid(N, C.lipschitz_step(N, L, r.T)) for r in runs]
    arms = [_grid_arms_amounts(g) for g in grids]
    tables = [logit_single_arm_table(r.inst, temperature, a, x) for r, (a, x) in zip(runs, arms)]
    game = Game(
        _pad_tables(tables, K),
        LogitSampler(
            [r.inst for r in runs],
            temperature,
            _stack_padded([a for a, _ in arms]).astype(int),
            _stack_padded([x for _, x in arms]),
        ),
    )
    learner = TsallisInf([t.shape[1] for t in tables], np.array([r.T for r in runs]))
    adv = _adversary(adversary, runs, np.random.default_rng([rng_key, 1]), adv_params)
    out = play(learner, game, adv, np.random.default_rng([rng_key, 2]))
    best = np.array([logit_best_fixed(r.inst, temperature, out["counts"][i].astype(float)) for i, r in enumerate(runs)])
    log(f"lipschitz/logit/{adversary}: {len(runs)} runs, grid sizes {sorted({t.shape[1] for t in tables})}")
    return _records(
        "lipschitz", runs, out, best, {"n_actions": [t.shape[1] for t in tables], "instance": ["logit"] * len(runs)}
    )


def needle_response(arms, amounts, bump_arm, centre, half_width, lipschitz, base_prob):
    """Pr[agent picks the high arm 0] under single-arm incentives: base_prob plus a tent of slope L/2.

    A smooth choice model with constant L: the response moves only through q, and
    |q(pi) - q(pi')| <= (L/2) ||pi - pi'||_inf, so the l1 distance of the two-arm distributions is <= L ||.||_inf.
    """
    bump = 0.5 * lipschitz * np.maximum(0.0, half_width - np.abs(amounts - centre)) * (arms == bump_arm)
    return base_prob + bump


def run_needle(
    horizons, seeds, N: int, lipschitz: float, width_factor: float, base_prob: float, rng_key: int
) -> list[dict]:
    """Tsallis-INF on the eps-grid against the needle family (one type, bump of half-width width_factor * eps_T)."""
    runs, params = [], []
    for T in horizons:
        eps = C.lipschitz_step(N, lipschitz, int(T))
        half = width_factor * eps
        assert base_prob + 0.5 * lipschitz * half <= 1, "needle: base_prob + L * half-width / 2 must be <= 1"
        for s in seeds:
            rng = instance_rng(s, N, int(T), 7)
            inst = Instance(mu=np.zeros((1, N)), v=np.r_[1.0, np.zeros(N - 1)])  # v: arm 0 high, others 0
            runs.append(Run(inst, N, 1, int(T), s, None))
            params.append((int(rng.integers(2, N)), float(rng.uniform(half, 1 - half)), half))
    order = np.argsort([-r.T for r in runs], kind="stable")
    runs, params = [runs[i] for i in order], [params[i] for i in order]
    grids = [C.uniform_grid(N, C.lipschitz_step(N, lipschitz, r.T)) for r in runs]
    arms = [_grid_arms_amounts(g) for g in grids]
    q = [needle_response(a, x, *p, lipschitz, base_prob) for (a, x), p in zip(arms, params)]
    # E[U] = q (1 - pi_0) + (1 - q) (0 - pi_1): payments only when the incentivised arm is the one picked
    tables = [
        (qq * (1 - np.where(a == 0, x, 0)) - (1 - qq) * np.where(a == 1, x, 0))[None, :] for qq, (a, x) in zip(q, arms)
    ]
    qpad, apad, xpad = (
        _stack_padded(q),
        _stack_padded([a for a, _ in arms]).astype(int),
        _stack_padded([x for _, x in arms]),
    )

    def sample(rng, j, a, m):
        rows = np.arange(m)
        high = rng.uniform(size=m) < qpad[rows, a]
        arm, x = apad[rows, a], xpad[rows, a]
        return np.where(high, 1.0 - np.where(arm == 0, x, 0.0), -np.where(arm == 1, x, 0.0))

    game = Game(_pad_tables(tables, 1), sample)
    learner = TsallisInf([t.shape[1] for t in tables], np.array([r.T for r in runs]))
    adv = Adversary("random", np.ones(len(runs), int), max(r.T for r in runs), np.random.default_rng([rng_key, 1]))
    out = play(learner, game, adv, np.random.default_rng([rng_key, 2]))
    # the best fixed incentive is the bump's peak (centre on bump_arm): value base_prob + L * half / 2 per round
    best = np.array([r.T * (base_prob + 0.5 * lipschitz * p[2]) for r, p in zip(runs, params)])
    log(f"lipschitz/needle: {len(runs)} runs, grid sizes {sorted({t.shape[1] for t in tables})}")
    uniform = best - uniform_play_value(tables, out["counts"])
    # never paying: incentive 0 lies outside every bump (centre >= half-width), so the agent picks arm 0 w.p. base_prob
    never = best - np.array([r.T * base_prob for r in runs])
    return _records(
        "lipschitz",
        runs,
        out,
        best,
        {
            "n_actions": [t.shape[1] for t in tables],
            "instance": ["needle"] * len(runs),
            "regret_uniform": [float(u) for u in uniform],
            "regret_never_pay": [float(v) for v in never],
        },
    )


# --- unknown greedy responses: the lower-bound instance ------------------------------------------


def run_lower_bound(
    adversary: str, algorithms, horizons, seeds, window: float, threshold_range, adv_params: dict, rng_key: int
) -> list[dict]:
    """Grid learners that do not know the responses vs Exp3-linear that does, on the Theorem 2.1 instance."""
    runs = []
    for T in horizons:
        for s in seeds:
            a = float(instance_rng(s, 3, 2, 11).uniform(*threshold_range))
            inst = lower_bound_instance(a, window)
            best = C.known_greedy_candidates(inst, merge=True)
            runs.append(Run(inst, 3, 2, int(T), s, greedy_utility(inst, best).T))
    runs = _order(runs)
    records = []
    for algorithm in algorithms:
        if algorithm == "exp3_linear":
            acts = [C.known_greedy_candidates(r.inst, merge=True) for r in runs]
        elif algorithm == "naive_grid":
            acts = [C.uniform_grid(r.N, C.naive_step(r.N, r.T)) for r in runs]
        elif algorithm == "lipschitz":  # Tsallis-INF on the eps-grid, L = 1 (the smallest the paper allows)
            acts = [C.uniform_grid(r.N, C.lipschitz_step(r.N, 1.0, r.T)) for r in runs]
        else:
            raise ValueError(f"lower_bound algorithm {algorithm!r} unknown; available: {list(LOWER_BOUND_ALGORITHMS)}")
        tables = [greedy_utility(r.inst, p).T for r, p in zip(runs, acts)]
        horizons_arr = np.array([r.T for r in runs])
        learner = (
            Exp3Linear([t.T for t in tables], horizons_arr)
            if algorithm == "exp3_linear"
            else TsallisInf([t.shape[1] for t in tables], horizons_arr)
            if algorithm == "lipschitz"
            else Exp3([t.shape[1] for t in tables], horizons_arr)
        )
        adv = _adversary(adversary, runs, np.random.default_rng([rng_key, 1]), adv_params)
        out = play(
            learner,
            Game(_pad_tables(tables, 2)),
            adv,
            np.random.default_rng([rng_key, 2, LOWER_BOUND_ALGORITHMS.index(algorithm)]),
        )
        best = best_fixed_value(_pad_tables([r.optimum_table for r in runs], 2), out["counts"])
        records += _records(
            algorithm, runs, out, best, {"n_actions": [t.shape[1] for t in tables], "rank": _ranks(learner, len(runs))}
        )
        log(f"lower_bound/{algorithm}: {len(runs)} runs")
    return records


# --- known greedy responses, general (multi-arm) incentives -------------------------------------


def run_multiarm(adversary: str, horizons, seeds, N: int, K: int, adv_params: dict, rng_key: int) -> list[dict]:
    """Exp3-linear on the vertices of the response polytopes; also books the best single-arm value."""
    runs, cands, single, per_seed = [], [], [], {}
    for s in seeds:  # the instance of a seed is the same at every horizon
        inst = random_instance(instance_rng(s, N, K, 13), K, N)
        cand = C.general_candidates(inst)
        per_seed[s] = (inst, cand, greedy_utility(inst, C.known_greedy_candidates(inst)).T)
    for T in horizons:
        for s in seeds:
            inst, cand, single_table = per_seed[s]
            runs.append(Run(inst, N, K, int(T), s, greedy_utility(inst, cand).T))
            cands.append(cand)
            single.append(single_table)
    order = np.argsort([-r.T for r in runs], kind="stable")
    runs, cands, single = [runs[i] for i in order], [cands[i] for i in order], [single[i] for i in order]
    tables = [r.optimum_table for r in runs]
    learner = Exp3Linear([t.T for t in tables], np.array([r.T for r in runs]))
    adv = _adversary(adversary, runs, np.random.default_rng([rng_key, 1]), adv_params)
    out = play(learner, Game(_pad_tables(tables, K)), adv, np.random.default_rng([rng_key, 2]))
    best = best_fixed_value(_pad_tables(tables, K), out["counts"])
    best_single = best_fixed_value(_pad_tables(single, K), out["counts"])
    log(f"multiarm: {len(runs)} runs, candidate sizes {sorted({len(c) for c in cands})}")
    return _records(
        "exp3_linear",
        runs,
        out,
        best,
        {
            "n_actions": [len(c) for c in cands],
            "rank": _ranks(learner, len(runs)),
            "best_single_arm": [float(b) for b in best_single],
            **trivial_regrets(runs, out["counts"], best),  # uniform play over the same vertices, never paying
        },
    )
