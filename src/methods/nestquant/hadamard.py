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
- Williamson (order 156 = 4 x 39, for which no Paley construction exists): four symmetric circulant +-1
  matrices A, B, C, D of order n with A^2 + B^2 + C^2 + D^2 = 4n I give the Hadamard matrix
  [[A, B, C, D], [-B, A, -D, C], [-C, D, A, -B], [-D, -C, B, A]] of order 4n. Their first rows (`WILLIAMSON`)
  were found by `williamson_search` (`benchmarks/williamson.py` runs it and prints them); the tests check
  that the matrices they give are Hadamard, and that the search finds valid sequences for small n.
Order 172 = 4 x 43 is not built: the same search for n = 43 holds more candidate pairs than 24 GB of memory.
A width that needs it (Llama-2-7B's 11008 = 172 x 64) stops with an error naming the width and the
block-diagonal alternative.
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
    156: ("williamson", 39),
    172: None,
}
# First rows of A, B, C, D ('+' = 1, '-' = -1; each row symmetric: entry j equals entry n - j), as printed
# by benchmarks/williamson.py.
WILLIAMSON = {
    39: (
        "+-+-++-+--+--++----------++--+--+-++-+-",
        "+-+-++----+++--++------++--+++----++-+-",
        "+-+++-++------+--+-++-+--+------++-+++-",
        "++---+-++++---+---+--+---+---++++-+---+",
    ),
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
            f"small_hadamard: no Hadamard matrix of order {k} is constructed here (Williamson sequences of order "
            f"{k // 4} were not found within this machine's memory); set nestquant.quant.rotation: block for "
            f"block-diagonal Hadamards"
        )
    kind, arg = how
    if kind == "paley1":
        return paley1(arg)
    if kind == "paley2":
        return paley2(arg)
    if kind == "williamson":
        return williamson_hadamard(*[[1.0 if c == "+" else -1.0 for c in row] for row in WILLIAMSON[arg]])
    return torch.kron(sylvester(2), small_hadamard(arg))


def _circulant(row) -> torch.Tensor:
    row = torch.as_tensor(row, dtype=torch.float64)
    return torch.stack([torch.roll(row, i) for i in range(row.numel())])


def williamson_hadamard(a, b, c, d) -> torch.Tensor:
    """The Hadamard matrix of order 4n of Williamson sequences a, b, c, d (first rows of symmetric circulant
    +-1 matrices A, B, C, D of order n with A^2 + B^2 + C^2 + D^2 = 4n I)."""
    A, B, C, D = map(_circulant, (a, b, c, d))
    return torch.cat(
        [
            torch.cat([A, B, C, D], 1),
            torch.cat([-B, A, -D, C], 1),
            torch.cat([-C, D, A, -B], 1),
            torch.cat([-D, -C, B, A], 1),
        ]
    )


def williamson_search(n: int, chunk: int = 64) -> tuple[str, str, str, str] | None:
    """Williamson sequences of odd order n (a, b, c, d as '+'/'-' strings), or None if there are none.

    Each sequence is symmetric (entry j equals entry n - j) and, negating it if needed, starts with +1: 2^m
    candidates, m = (n - 1) / 2. Their real spectra F(k) = a_0 + 2 sum_j a_j cos(2 pi j k / n) must satisfy
    F_A(k)^2 + F_B(k)^2 + F_C(k)^2 + F_D(k)^2 = 4n at every k, so a candidate with F(k)^2 > 4n anywhere is
    dropped, and so is a pair (A, B) or (C, D) whose spectra sum above 4n. The row sums are odd numbers
    whose squares add to 4n; for each such split, pairs (A, B) and (C, D) meet where their periodic
    autocorrelations (integers) cancel at every shift: a hash join, each hit checked exactly."""
    import itertools

    import numpy as np

    if n < 3 or n % 2 == 0:
        raise ValueError(f"williamson_search: n must be odd and >= 3, got {n}")
    m = (n - 1) // 2
    half = 1 - 2 * ((np.arange(1 << m)[:, None] >> np.arange(m)) & 1)
    seq = np.concatenate([np.ones((1 << m, 1), np.int64), half, half[:, ::-1]], 1)
    cos = np.cos(2 * np.pi * np.outer(np.arange(1, m + 1), np.arange(m + 1)) / n)
    power = ((1 + 2 * seq[:, 1 : m + 1] @ cos) ** 2).astype(np.float32)
    bound = 4 * n + 1e-3
    keep = (power <= bound).all(1)
    seq, power = seq[keep], power[keep]
    paf = np.stack([(seq * np.roll(seq, -s, axis=1)).sum(1) for s in range(1, m + 1)], 1)
    sums = np.abs(seq.sum(1))
    classes = {int(v): np.flatnonzero(sums == v) for v in np.unique(sums)}
    splits = [
        split
        for split in itertools.combinations_with_replacement(sorted(classes, reverse=True), 4)
        if sum(v * v for v in split) == 4 * n
    ]
    splits.sort(key=lambda sp: len(classes[sp[0]]) * len(classes[sp[1]]) + len(classes[sp[2]]) * len(classes[sp[3]]))
    # a linear hash of the autocorrelations (int64 arithmetic wraps): the key of a pair is a sum of two numbers
    hashed = paf @ np.random.default_rng(0).integers(1, 2**62, m, dtype=np.int64)

    def pairs(first, second):
        """The pairs (i, j), i from `first` and j from `second`, whose spectra sum to at most 4n everywhere."""
        out_i, out_j = [], []
        for start in range(0, len(first), chunk):
            block = first[start : start + chunk]
            ok = np.ones((len(block), len(second)), bool)
            for k in range(m + 1):  # one frequency at a time: small temporaries
                ok &= power[block, k][:, None] + power[second, k][None, :] <= bound
            i, j = np.nonzero(ok)
            out_i.append(block[i].astype(np.int32))
            out_j.append(second[j].astype(np.int32))
        i, j = np.concatenate(out_i), np.concatenate(out_j)
        return (i[i <= j], j[i <= j]) if first is second else (i, j)

    for sa, sb, sc, sd in splits:
        a, b = pairs(classes[sa], classes[sb])
        c, d = pairs(classes[sc], classes[sd])
        _, hits_ab, hits_cd = np.intersect1d(hashed[a] + hashed[b], -(hashed[c] + hashed[d]), return_indices=True)
        for x, y in zip(hits_ab, hits_cd):
            rows = [a[x], b[x], c[y], d[y]]
            if not paf[rows].sum(0).any():
                return tuple("".join("+" if v > 0 else "-" for v in seq[r]) for r in rows)
    return None


def kronecker_hadamard(n: int) -> torch.Tensor:
    """The unnormalised n x n rotation matrix H_K (x) H_{n/K} (for tests and small n; `rotate` never forms it)."""
    k = hadamard_order(n)
    return torch.kron(small_hadamard(k), sylvester(n // k))
