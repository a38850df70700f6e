"""Propositional semantics of preference losses: worlds, weighted model counting, preference
structures and their semantic loss, the loss lattice and its entailment order.

Propositions are the model's predictions M(x, y_i), named (e.g. "w" = winner correct, "l" = loser
correct). A world assigns a truth value to each; world k has bit i = truth of proposition i. A set of
worlds is an int bitmask over the 2^n worlds, so every Boolean function of n propositions is one int.

Semantic loss (Xu et al. 2018; the paper's Section 3): -log of a weighted model count,
WMC(S) = sum_{worlds in S} prod_i p_i^{w_i} (1 - p_i)^{1 - w_i}.

Preference structure (P, P_C, P_A) -- core formula, conditioning constraint, additional constraint
(the paper's triple; how P_A enters is OUR derivation, the paper's body could not be read): it
compiles into two world sets

    N = (P and P_C) or P_A,     D = (not P and P_C) or P_A,

and its loss is  -log WMC(N) / (WMC(N) + WMC(D)) = softplus(-rho),  rho = log WMC(N) - log WMC(D).
With P_A = false this is the conditional semantic loss -log p(P | P_C). Worlds in P_A count on both
sides (a tie); this is what lets CPO's overlapping counts p_w vs p_l be expressed, and it makes the
compile map onto all 4^(2^n) pairs (N, D), the size of the landscape the paper states.

Entailment (ours): S1 |= S2 iff N1 <= N2 and D2 <= D1 (S1 accepts fewer worlds and rejects more).
Then loss(S1) >= loss(S2) pointwise, because rho is monotone in N and anti-monotone in D. Per world
this is the diamond  rejected (D only) < tie (both), ignored (neither) < accepted (N only), so the
order is the product of 2^n diamonds: a lattice with 4^(2^n) elements.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

# Per-world role of a structure: index = in_N + 2 * in_D
ROLE_NAMES = ("ignored", "accepted", "rejected", "tie")


# ----------------------------------------------------------------------------------------------
# Formulas
# ----------------------------------------------------------------------------------------------
class Formula:
    """A propositional formula; `mask(names)` is its set of models as a bitmask over the worlds."""

    def mask(self, names: tuple[str, ...]) -> int:
        out = 0
        for k in range(1 << len(names)):
            if self.holds({n: bool((k >> i) & 1) for i, n in enumerate(names)}):
                out |= 1 << k
        return out

    def holds(self, world: dict) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def __and__(self, other):
        return And(self, other)

    def __or__(self, other):
        return Or(self, other)

    def __invert__(self):
        return Not(self)


@dataclass(frozen=True)
class Var(Formula):
    name: str

    def holds(self, world):
        return world[self.name]

    def __str__(self):
        return self.name


@dataclass(frozen=True)
class Const(Formula):
    value: bool

    def holds(self, world):
        return self.value

    def __str__(self):
        return "T" if self.value else "F"


@dataclass(frozen=True)
class Not(Formula):
    a: Formula

    def holds(self, world):
        return not self.a.holds(world)

    def __str__(self):
        return f"~{self.a}"


@dataclass(frozen=True)
class And(Formula):
    a: Formula
    b: Formula

    def holds(self, world):
        return self.a.holds(world) and self.b.holds(world)

    def __str__(self):
        return f"({self.a} & {self.b})"


@dataclass(frozen=True)
class Or(Formula):
    a: Formula
    b: Formula

    def holds(self, world):
        return self.a.holds(world) or self.b.holds(world)

    def __str__(self):
        return f"({self.a} | {self.b})"


@dataclass(frozen=True)
class Xor(Formula):
    a: Formula
    b: Formula

    def holds(self, world):
        return self.a.holds(world) != self.b.holds(world)

    def __str__(self):
        return f"({self.a} ^ {self.b})"


def Implies(a: Formula, b: Formula) -> Formula:  # noqa: N802 - reads as a connective
    return Or(Not(a), b)


TRUE, FALSE = Const(True), Const(False)


# ----------------------------------------------------------------------------------------------
# Preference structures
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Structure:
    """A compiled preference structure: world sets N (counted for) and D (counted against)."""

    names: tuple[str, ...]
    n_mask: int
    d_mask: int

    @property
    def n_worlds(self) -> int:
        return 1 << len(self.names)

    def roles(self) -> list[str]:
        """Role of each world: ignored / accepted / rejected / tie."""
        return [ROLE_NAMES[((self.n_mask >> k) & 1) + 2 * ((self.d_mask >> k) & 1)] for k in range(self.n_worlds)]

    def decompile(self) -> tuple[int, int, int]:
        """A canonical triple (P, P_C, P_A) as world masks that compiles back to (N, D)."""
        return self.n_mask, self.n_mask | self.d_mask, self.n_mask & self.d_mask


def compile_structure(names: tuple[str, ...], core: Formula, cond: Formula = TRUE, extra: Formula = FALSE) -> Structure:
    """(P, P_C, P_A) -> (N, D) with N = (P & P_C) | P_A, D = (~P & P_C) | P_A (module docstring)."""
    p, c, a = core.mask(names), cond.mask(names), extra.mask(names)
    full = (1 << (1 << len(names))) - 1
    return Structure(names, (p & c) | a, ((full & ~p) & c) | a)


def compile_masks(p, c, a, n_props: int):
    """Vectorised compile map on world masks (numpy integer arrays); returns (N, D)."""
    full = (1 << (1 << n_props)) - 1
    return (p & c) | a, ((full ^ p) & c) | a


def world_bits(n_props: int) -> np.ndarray:
    """(2^n, n) 0/1 matrix: row k is world k, column i the truth of proposition i."""
    return np.array([[(k >> i) & 1 for i in range(n_props)] for k in range(1 << n_props)], dtype=np.int64)


def mask_members(mask: int, n_worlds: int) -> list[int]:
    return [k for k in range(n_worlds) if (mask >> k) & 1]


def formula_string(mask: int, names: tuple[str, ...]) -> str:
    """A short DNF of a world set, simplified with sympy (for tables and figures only)."""
    import sympy
    from sympy.logic import SOPform

    symbols = sympy.symbols(names)
    minterms = [[(k >> i) & 1 for i in range(len(names))] for k in mask_members(mask, 1 << len(names))]
    expr = SOPform(symbols, minterms) if minterms else sympy.false
    return str(expr)


# ----------------------------------------------------------------------------------------------
# Weighted model counting and the semantic loss (torch, log space)
# ----------------------------------------------------------------------------------------------
LOG_HALF = -0.6931471805599453


def log1mexp(x: torch.Tensor) -> torch.Tensor:
    """log(1 - exp(x)) for x <= 0, accurate at both ends (Maechler 2012): log(-expm1(x)) above -log 2,
    log1p(-exp(x)) below. Each branch is evaluated only on inputs in its own range (the other entries get
    a harmless -1): torch.where passes a zero gradient to the branch it discards, and 0 times the infinite
    gradient of log1p(-exp(x)) at exp(x) = 1 (x > -6e-8 in float32) would be NaN."""
    x = torch.clamp(x, max=-1e-300 if x.dtype == torch.float64 else -1e-30)
    near_zero = x > LOG_HALF
    safe = torch.full_like(x, -1.0)
    return torch.where(
        near_zero,
        torch.log(-torch.expm1(torch.where(near_zero, x, safe))),
        torch.log1p(-torch.exp(torch.where(near_zero, safe, x))),
    )


def world_log_weights(log_p: torch.Tensor) -> torch.Tensor:
    """(..., n) log-probabilities of the propositions -> (..., 2^n) log weights of the worlds."""
    n = log_p.shape[-1]
    bits = torch.as_tensor(world_bits(n), dtype=log_p.dtype, device=log_p.device)  # (2^n, n)
    log_q = log1mexp(log_p)
    return log_p @ bits.T + log_q @ (1 - bits).T


def log_wmc(log_p: torch.Tensor, mask: int) -> torch.Tensor:
    """log WMC of a world set (a bitmask) by exhaustive enumeration of the 2^n worlds; -inf if empty."""
    lw = world_log_weights(log_p)
    idx = mask_members(mask, lw.shape[-1])
    if not idx:
        return torch.full(lw.shape[:-1], -torch.inf, dtype=lw.dtype, device=lw.device)
    return torch.logsumexp(lw[..., idx], dim=-1)


def margin(structure: Structure, log_p: torch.Tensor) -> torch.Tensor:
    """rho = log WMC(N) - log WMC(D)."""
    return log_wmc(log_p, structure.n_mask) - log_wmc(log_p, structure.d_mask)


def semantic_loss(
    structure: Structure, log_p: torch.Tensor, log_p_ref: torch.Tensor | None = None, reference: str = "none"
) -> torch.Tensor:
    """-log WMC(N) / (WMC(N) + WMC(D)) per example, with the reference-model variants:

    * "none":  propositions weighted by the policy alone;
    * "ratio": rho = rho_theta - rho_ref, the structure's margin under the policy minus under the
      reference (the log of a ratio of the two conditional odds);
    * "odds":  each proposition's probability is sigma(log pi_theta - log pi_ref), so its odds are
      the likelihood ratio pi_theta / pi_ref (inputs are then those log-ratios, passed as log_p).
    """
    if reference == "none":
        rho = margin(structure, log_p)
    elif reference == "ratio":
        rho = margin(structure, log_p) - margin(structure, log_p_ref)
    elif reference == "odds":
        rho = margin(structure, torch.nn.functional.logsigmoid(log_p - log_p_ref))
    else:
        raise ValueError(f"reference variant {reference!r}: expected one of none, ratio, odds")
    return torch.logaddexp(torch.zeros_like(rho), -rho)  # softplus(-rho) without torch's threshold cut-off


def wmc_bruteforce(p: list[float], mask: int) -> float:
    """WMC by a direct product over worlds in plain Python floats (an independent reference)."""
    total = 0.0
    for k in range(1 << len(p)):
        if (mask >> k) & 1:
            w = 1.0
            for i, pi in enumerate(p):
                w *= pi if (k >> i) & 1 else 1.0 - pi
            total += w
    return total


# ----------------------------------------------------------------------------------------------
# The lattice
# ----------------------------------------------------------------------------------------------
def all_structures(names: tuple[str, ...]) -> list[Structure]:
    """Every (N, D) pair over the 2^n worlds: 4^(2^n) structures."""
    n_sets = 1 << (1 << len(names))
    return [Structure(names, n, d) for n in range(n_sets) for d in range(n_sets)]


def compile_image_size(n_props: int) -> int:
    """Number of distinct (N, D) reached by compiling all (2^(2^n))^3 triples (P, P_C, P_A)."""
    n_sets = 1 << (1 << n_props)
    dtype = np.uint32
    p = np.arange(n_sets, dtype=dtype)[:, None, None]
    c = np.arange(n_sets, dtype=dtype)[None, :, None]
    a = np.arange(n_sets, dtype=dtype)[None, None, :]
    n, d = compile_masks(p, c, a, n_props)
    codes = (n.astype(np.uint64) * n_sets + d).ravel()
    return int(np.unique(codes).size)


def entails(s1: Structure, s2: Structure) -> bool:
    """S1 |= S2: N1 subset of N2 and D2 subset of D1 (module docstring)."""
    return (s1.n_mask & ~s2.n_mask) == 0 and (s2.d_mask & ~s1.d_mask) == 0


def entailment_matrix(n_masks: np.ndarray, d_masks: np.ndarray) -> np.ndarray:
    """Boolean (S, S) matrix R[i, j] = structure i entails structure j (vectorised `entails`)."""
    n_i, n_j = n_masks[:, None], n_masks[None, :]
    d_i, d_j = d_masks[:, None], d_masks[None, :]
    return ((n_i & ~n_j) == 0) & ((d_j & ~d_i) == 0)


def is_partial_order(rel: np.ndarray) -> dict:
    """Reflexivity, antisymmetry and transitivity of a boolean relation matrix."""
    r = rel.astype(bool)
    reflexive = bool(np.all(np.diag(r)))
    antisymmetric = bool(not np.any(r & r.T & ~np.eye(len(r), dtype=bool)))
    composed = (r.astype(np.int64) @ r.astype(np.int64)) > 0
    transitive = bool(not np.any(composed & ~r))
    return {"reflexive": reflexive, "antisymmetric": antisymmetric, "transitive": transitive}


def log_wmc_table(n_props: int, log_p: np.ndarray) -> np.ndarray:
    """(n_sets, M) log WMC of every world set at M points (log_p: (M, n)); -inf for the empty set."""
    bits = world_bits(n_props)
    log_q = np.log(-np.expm1(log_p))
    lw = log_p @ bits.T + log_q @ (1 - bits).T  # (M, 2^n)
    w = np.exp(lw)
    n_sets = 1 << (1 << n_props)
    members = np.array([[(s >> k) & 1 for k in range(1 << n_props)] for s in range(n_sets)], dtype=float)
    with np.errstate(divide="ignore"):
        return np.log(members @ w.T)


def distinct_loss_functions(n_props: int, n_points: int = 6, seed: int = 0, decimals: int = 9) -> int:
    """Number of different loss functions among the 4^(2^n) structures, by their values at random
    points (rounded): structures with the same rho polynomial ratio N * D' = N' * D coincide."""
    rng = np.random.default_rng(seed)
    log_p = np.log(rng.uniform(0.05, 0.95, size=(n_points, n_props)))
    table = log_wmc_table(n_props, log_p)  # (n_sets, M)
    with np.errstate(invalid="ignore"):
        rho = table[:, None, :] - table[None, :, :]  # (N, D, M)
    # empty N: loss inf for every D (-inf - x, or -inf - -inf = nan): one function
    rho = np.where(np.isnan(rho), -np.inf, rho)
    rounded = np.round(rho.reshape(-1, n_points), decimals)
    return int(np.unique(rounded, axis=0).shape[0])


def structure_count(n_props: int) -> int:
    return 4 ** (1 << n_props)
