"""Finite incentive sets: the paper's candidate incentives (known greedy responses) and uniform grids.

Known greedy responses, single-arm incentives (paper Section 3): for arm i and type j, pi^{i,j} is
the smallest incentive on arm i that makes type j choose i, i.e. max_k mu_{j,k} - mu_{j,i}. Between two
consecutive thresholds on one arm the set of types choosing i is fixed while the payment grows, so
together with the zero incentive these K*N + 1 incentives contain a best fixed incentive for any
arrival sequence (the tie-break of model.greedy_response makes the thresholds attained).
Candidates are then merged by the map h(pi) in {0,1}^K (which types choose the incentivised arm):
two candidates with the same pattern give every type outside the pattern its default arm and every
type inside the same net v_i - pi_i, so the one with the larger v_i - pi_i dominates type by type;
keeping it leaves at most min(K*N, 2^K) + 1 incentives (the paper's bound is min(2KN, 2^K) + 1).

General (multi-arm) incentives (paper Section 3, extension): for a target assignment sigma of types
to arms the set of incentives inducing it is a polytope; the principal's utility is linear on it,
so a best fixed incentive is a vertex of one such polytope. `general_candidates` enumerates those
vertices exactly (small N and K only; the paper instead covers them with a (6KT)^K-point net).
"""

from __future__ import annotations

import itertools

import numpy as np

from .model import Instance, greedy_response, greedy_utility, single_arm_incentives


def default_arms(inst: Instance) -> np.ndarray:
    """Each type's choice without incentive, b(0, j); (K,)."""
    return greedy_response(inst, np.zeros((1, inst.n_arms)))[0]


def threshold_incentives(inst: Instance) -> np.ndarray:
    """The zero incentive and pi^{i,j} = (max_k mu_{j,k} - mu_{j,i}) e_i for every arm i and type j; (K*N + 1, N)."""
    gaps = inst.mu.max(axis=1, keepdims=True) - inst.mu  # (K, N): gaps[j, i] = amount on arm i that moves type j
    arms = np.tile(np.arange(inst.n_arms), inst.n_types)
    amounts = gaps.reshape(-1)
    return np.vstack([np.zeros((1, inst.n_arms)), single_arm_incentives(arms, amounts, inst.n_arms)])


def response_pattern(inst: Instance, pi: np.ndarray) -> np.ndarray:
    """h(pi) in {0,1}^K: which types choose the incentivised arm of each single-arm incentive; (M, K) bool.

    The zero incentive has the empty pattern.
    """
    pi = np.atleast_2d(pi)
    arm = pi.argmax(axis=1)
    chosen = greedy_response(inst, pi)
    return (chosen == arm[:, None]) & (pi.max(axis=1) > 0)[:, None]


def merge_by_pattern(inst: Instance, pi: np.ndarray) -> np.ndarray:
    """Keep, for every response pattern h, the incentive with the largest utility (it dominates type by type)."""
    pi = np.atleast_2d(pi)
    z = greedy_utility(inst, pi)
    patterns = response_pattern(inst, pi)
    keep = {}
    for m, key in enumerate(map(bytes, np.packbits(patterns, axis=1))):
        if key not in keep or z[m].sum() > z[keep[key]].sum():
            keep[key] = m
    kept = pi[sorted(keep.values())]
    return _unique_rows(kept, greedy_utility(inst, kept))


def _unique_rows(pi: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Drop incentives whose utility vector repeats an earlier one exactly (kept: the first)."""
    _, first = np.unique(z, axis=0, return_index=True)
    return pi[np.sort(first)]


def known_greedy_candidates(inst: Instance, merge: bool = True) -> np.ndarray:
    """The candidate set of the known-greedy algorithm: merged (Pi-hat) or the raw K*N + 1 thresholds (Pi)."""
    pi = threshold_incentives(inst)
    return merge_by_pattern(inst, pi) if merge else pi


def uniform_grid(n_arms: int, step: float) -> np.ndarray:
    """Single-arm incentives {0} u {x e_i : x in {step, 2 step, ...} <= 1, i in [N]}: N * floor(1/step) + 1 points."""
    assert 0 < step <= 1, f"grid step must lie in (0, 1], got {step}"
    levels = step * np.arange(1, int(np.floor(1.0 / step + 1e-9)) + 1)
    arms = np.repeat(np.arange(n_arms), len(levels))
    amounts = np.tile(levels, n_arms)
    return np.vstack([np.zeros((1, n_arms)), single_arm_incentives(arms, amounts, n_arms)])


def lipschitz_step(n_arms: int, lipschitz: float, horizon: int) -> float:
    """The paper's tuned grid step eps = N^{1/3} (2L + 1)^{-2/3} T^{-1/3} (smooth model, single-arm incentives).

    It balances the discretisation error T (2L + 1) eps against Tsallis-INF's sqrt(T N / eps).
    """
    return float(min(1.0, n_arms ** (1 / 3) * (2 * lipschitz + 1) ** (-2 / 3) * horizon ** (-1 / 3)))


def naive_step(n_arms: int, horizon: int) -> float:
    """Step of the naive baseline grid, eps = (N / T)^{1/3}: balances eps T against sqrt(T N / eps) (logs dropped)."""
    return float(min(1.0, (n_arms / horizon) ** (1 / 3)))


# --- general (multi-arm) incentives -----------------------------------------------------------------


def _polytope_constraints(inst: Instance, sigma: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """A pi >= c describing the closure of {pi in [0,1]^N : type j weakly prefers sigma_j to every arm}."""
    N = inst.n_arms
    rows, rhs = [], []
    for j, s in enumerate(sigma):
        for k in range(N):
            if k != s:  # mu_js + pi_s >= mu_jk + pi_k
                row = np.zeros(N)
                row[s], row[k] = 1.0, -1.0
                rows.append(row)
                rhs.append(inst.mu[j, k] - inst.mu[j, s])
    eye = np.eye(N)
    rows += list(eye) + list(-eye)  # pi >= 0 and -pi >= -1
    rhs += [0.0] * N + [-1.0] * N
    return np.array(rows), np.array(rhs)


def polytope_vertices(inst: Instance, sigma: tuple[int, ...], tol: float = 1e-9) -> np.ndarray:
    """Vertices of the closed polytope inducing assignment sigma (basic feasible solutions), (V, N)."""
    A, c = _polytope_constraints(inst, sigma)
    N = inst.n_arms
    out = []
    for rows in itertools.combinations(range(len(A)), N):
        sub = A[list(rows)]
        if abs(np.linalg.det(sub)) < 1e-12:
            continue
        x = np.linalg.solve(sub, c[list(rows)])
        if np.all(A @ x >= c - tol):
            out.append(np.clip(x, 0.0, 1.0))
    return np.unique(np.round(np.array(out), 12), axis=0) if out else np.zeros((0, N))


def general_candidates(inst: Instance) -> np.ndarray:
    """All vertices over all assignments sigma (and the zero incentive), one per distinct utility vector; (M, N).

    Contains a best fixed general incentive for every arrival sequence: on each polytope the
    utility sum_j n_j (v_{sigma_j} - pi_{sigma_j}) is linear, so its maximum is at a vertex, where the
    principal-favourable tie-break gives each type at least that value. Dominated vertices are kept,
    as in the paper's discretisation (only exact duplicates are merged). Cost: N^K assignments times
    C(K(N-1) + 2N, N) bases, meant for N, K <= 4.
    """
    K, N = inst.n_types, inst.n_arms
    verts = [polytope_vertices(inst, sigma) for sigma in itertools.product(range(N), repeat=K)]
    pi = np.unique(np.round(np.vstack([np.zeros((1, N))] + verts), 12), axis=0)
    return _unique_rows(pi, greedy_utility(inst, pi))
