"""Hadamard matrices for rotation widths that are not powers of two (NestQuant Sec. 4; the rotation of the
official code and of QuaRot).

A width n = K * 2^m is rotated by the Kronecker product H_K (x) H_{2^m} / sqrt(n): a small Hadamard matrix of
order K times a Sylvester matrix, with K the first order of `SMALL_ORDERS` that divides n (the order in which
the official code tries them, e.g. 14336 = 28 * 512, 576 = 36 * 16, 640 = 40 * 16, MiniLM's 384 = 12 * 32).

The small matrices are constructed here, not tabulated:
- Paley I (q a prime power, q = 3 mod 4): order q + 1, H = I + [[0, 1^T], [-1, Q]] with Q the Jacobsthal
  matrix Q[a, b] = chi(a - b) of GF(q) and chi its quadratic character.
- Paley II (q = 1 mod 4): order 2 (q + 1) from the symmetric conference matrix C = [[0, 1^T], [1, Q]]:
  H = C (x) [[1, 1], [1, -1]] + I (x) [[1, -1], [-1, -1]].
- Sylvester doubling: H_2K = [[1, 1], [1, -1]] (x) H_K.
Orders 156 and 172 need Williamson-type constructions that are not implemented: a width that needs them
stops with an error naming the width and the block-diagonal alternative.
"""

from __future__ import annotations

from functools import lru_cache

import torch

# the small orders in the order the official code tries them (the first that divides the width wins)
SMALL_ORDERS = (172, 156, 140, 108, 60, 52, 36, 28, 44, 40, 20, 12)
# how each order is built: ("paley1", q), ("paley2", q), ("double", K) or None (not constructed here)
CONSTRUCTIONS = {
    12: ("paley1", 11),
    20: ("paley1", 19),
    28: ("paley2", 13),
    36: ("paley2", 17),
    40: ("double", 20),
    44: ("paley1", 43),
    52: ("paley2", 25),
    60: ("paley1", 59),
    108: ("paley1", 107),
    140: ("paley1", 139),
    156: None,
    172: None,
}


def is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def hadamard_order(n: int) -> int:
    """The small order K of the rotation of width n (1 for a power of two): the first of SMALL_ORDERS
    dividing n, and n / K must then be a power of two, as in the official code."""
    if is_pow2(n):
        return 1
    for k in SMALL_ORDERS:
        if n % k == 0:
            if not is_pow2(n // k):
                raise ValueError(
                    f"hadamard_order: width {n} = {k} x {n // k}, and {n // k} is not a power of two; no Kronecker "
                    f"Hadamard rotation of this width (set nestquant.quant.rotation: block for block-diagonal "
                    f"Hadamards)"
                )
            return k
    raise ValueError(
        f"hadamard_order: width {n} is neither a power of two nor K x 2^m for K in {SMALL_ORDERS} (set "
        f"nestquant.quant.rotation: block for block-diagonal Hadamards)"
    )


def _prime_power(q: int) -> tuple[int, int]:
    for p in range(2, q + 1):
        if q % p == 0:
            k, r = 0, q
            while r % p == 0:
                r, k = r // p, k + 1
            if r != 1:
                raise ValueError(f"_prime_power: {q} is not a prime power")
            return p, k
    raise ValueError(f"_prime_power: {q} is not a prime power")


def _field(q: int) -> tuple[list, callable, callable]:
    """GF(q) for q = p or p^2: (elements, subtraction, multiplication). GF(p^2) = GF(p)[t] / (t^2 - c), c a
    non-residue mod p."""
    p, k = _prime_power(q)
    if k == 1:
        return list(range(p)), lambda a, b: (a - b) % p, lambda a, b: (a * b) % p
    if k != 2:
        raise ValueError(f"_field: GF({q}) of degree {k} is not needed by any order here")
    c = next(c for c in range(2, p) if all((x * x) % p != c for x in range(p)))
    elements = [(a, b) for a in range(p) for b in range(p)]
    sub = lambda x, y: ((x[0] - y[0]) % p, (x[1] - y[1]) % p)  # noqa: E731
    mul = lambda x, y: ((x[0] * y[0] + c * x[1] * y[1]) % p, (x[0] * y[1] + x[1] * y[0]) % p)  # noqa: E731
    return elements, sub, mul


def jacobsthal(q: int) -> torch.Tensor:
    """Q[a, b] = chi(a - b) over GF(q), chi the quadratic character (0 at 0, +1 on squares, -1 otherwise)."""
    elements, sub, mul = _field(q)
    zero = elements[0]
    squares = {mul(x, x) for x in elements if x != zero}
    chi = lambda x: 0 if x == zero else (1 if x in squares else -1)  # noqa: E731
    return torch.tensor([[chi(sub(a, b)) for b in elements] for a in elements], dtype=torch.float64)


def paley1(q: int) -> torch.Tensor:
    """Paley's first construction, order q + 1 (q = 3 mod 4)."""
    if q % 4 != 3:
        raise ValueError(f"paley1: q = {q} must be 3 mod 4")
    s = torch.zeros(q + 1, q + 1, dtype=torch.float64)
    s[0, 1:], s[1:, 0], s[1:, 1:] = 1.0, -1.0, jacobsthal(q)
    return torch.eye(q + 1, dtype=torch.float64) + s


def paley2(q: int) -> torch.Tensor:
    """Paley's second construction, order 2 (q + 1) (q = 1 mod 4)."""
    if q % 4 != 1:
        raise ValueError(f"paley2: q = {q} must be 1 mod 4")
    c = torch.zeros(q + 1, q + 1, dtype=torch.float64)
    c[0, 1:], c[1:, 0], c[1:, 1:] = 1.0, 1.0, jacobsthal(q)
    plus = torch.tensor([[1.0, 1.0], [1.0, -1.0]], dtype=torch.float64)
    minus = torch.tensor([[1.0, -1.0], [-1.0, -1.0]], dtype=torch.float64)
    return torch.kron(c, plus) + torch.kron(torch.eye(q + 1, dtype=torch.float64), minus)


def sylvester(n: int) -> torch.Tensor:
    """The Sylvester Hadamard matrix of order n (a power of two): H_2n = [[H, H], [H, -H]]."""
    if not is_pow2(n):
        raise ValueError(f"sylvester: order {n} is not a power of two")
    h = torch.ones(1, 1, dtype=torch.float64)
    while h.shape[0] < n:
        h = torch.cat((torch.cat((h, h), 1), torch.cat((h, -h), 1)), 0)
    return h


@lru_cache(maxsize=None)
def small_hadamard(k: int) -> torch.Tensor:
    """The unnormalised (+-1) Hadamard matrix of small order k (float64, read-only use)."""
    if k == 1:
        return torch.ones(1, 1, dtype=torch.float64)
    if k not in CONSTRUCTIONS:
        raise ValueError(f"small_hadamard: order {k} is not one of {sorted(CONSTRUCTIONS)}")
    how = CONSTRUCTIONS[k]
    if how is None:
        raise ValueError(
            f"small_hadamard: no Hadamard matrix of order {k} is constructed here (it needs a Williamson-type "
            f"construction); set nestquant.quant.rotation: block for block-diagonal Hadamards"
        )
    kind, arg = how
    if kind == "paley1":
        return paley1(arg)
    if kind == "paley2":
        return paley2(arg)
    return torch.kron(sylvester(2), small_hadamard(arg))


def kronecker_hadamard(n: int) -> torch.Tensor:
    """The unnormalised n x n rotation matrix H_K (x) H_{n/K} (for tests and small n; `rotate` never forms it)."""
    k = hadamard_order(n)
    return torch.kron(small_hadamard(k), sylvester(n // k))
