"""Hadamard rotations of widths that are not powers of two: the small matrices, the Kronecker construction
and the order it picks for each width."""

import math

import pytest
import torch

from methods.nestquant.hadamard import (
    CONSTRUCTIONS,
    SMALL_ORDERS,
    WILLIAMSON,
    hadamard_order,
    kronecker_hadamard,
    small_hadamard,
    sylvester,
    williamson_hadamard,
    williamson_search,
)
from methods.nestquant.quant import random_hadamard, rotate, unrotate

BUILT = sorted(k for k, how in CONSTRUCTIONS.items() if how is not None)


def _is_hadamard(h: torch.Tensor) -> bool:
    n = h.shape[0]
    entries_pm1 = bool(((h == 1) | (h == -1)).all())
    return entries_pm1 and torch.equal(h @ h.T, n * torch.eye(n, dtype=h.dtype))


@pytest.mark.parametrize("k", BUILT)
def test_small_hadamard_is_a_hadamard_matrix(k):
    """Entries +-1 and H H^T = k I (exact in float64: integers well below 2^53)."""
    h = small_hadamard(k)
    assert h.shape == (k, k)
    assert _is_hadamard(h)


def test_every_official_order_but_172_is_built():
    assert BUILT == [12, 20, 28, 36, 40, 44, 52, 60, 108, 140, 156]
    with pytest.raises(ValueError, match="order 172.*rotation: block"):
        small_hadamard(172)
    with pytest.raises(ValueError, match="order 24 is not one of"):
        small_hadamard(24)


@pytest.mark.parametrize("n", [39])
def test_tabulated_williamson_sequences_are_symmetric_and_give_hadamard_matrices(n):
    rows = WILLIAMSON[n]
    assert len(rows) == 4 and all(len(r) == n and set(r) <= {"+", "-"} for r in rows)
    assert all(r[j] == r[n - j] for r in rows for j in range(1, n))
    assert _is_hadamard(williamson_hadamard(*[[1.0 if c == "+" else -1.0 for c in r] for r in rows]))


@pytest.mark.parametrize("n", [3, 5, 9, 13, 17])
def test_williamson_search_finds_valid_sequences(n):
    """The search that found the tabulated sequences, on orders small enough to run here: what it returns
    gives a Hadamard matrix of order 4n."""
    rows = williamson_search(n)
    assert rows is not None and all(r[0] == "+" for r in rows)
    assert _is_hadamard(williamson_hadamard(*[[1.0 if c == "+" else -1.0 for c in r] for r in rows]))


def _official_order(n: int) -> int:
    """The rule written out independently: power of two -> 1, else the first listed order dividing n."""
    if n & (n - 1) == 0:
        return 1
    return next(k for k in (172, 156, 140, 108, 60, 52, 36, 28, 44, 40, 20, 12) if n % k == 0)


# every width the repo rotates (tiny Llama 128 / 512, its head 32; MiniLM 384 / 1536, head 32; Llama-3-8B 4096 /
# 14336, head 128) and the spot checks 576 = 36 x 16, 640 = 40 x 16 (40 before 20), 13824 = 108 x 128, and the
# Williamson orders: Llama-2-7B's 11008 = 172 x 64, 9984 = 156 x 64
@pytest.mark.parametrize(
    "n,k",
    [
        (32, 1),
        (128, 1),
        (512, 1),
        (384, 12),
        (1536, 12),
        (4096, 1),
        (14336, 28),
        (576, 36),
        (640, 40),
        (13824, 108),
        (11008, 172),
        (9984, 156),
    ],
)
def test_chosen_order_follows_the_official_list(n, k):
    assert SMALL_ORDERS == (172, 156, 140, 108, 60, 52, 36, 28, 44, 40, 20, 12)
    assert hadamard_order(n) == k == _official_order(n)


def test_width_without_a_kronecker_hadamard_names_the_fix():
    with pytest.raises(ValueError, match="width 100 .*rotation: block"):
        hadamard_order(100)
    with pytest.raises(ValueError, match="width 324 = 108 x 3.*rotation: block"):
        hadamard_order(324)


@pytest.mark.parametrize("n", [384, 576, 640, 1536])
def test_rotation_is_the_normalised_kronecker_product(n):
    """rotate with unit signs applies H_K (x) H_{n/K} / sqrt(n) to every row; that matrix is Hadamard."""
    k = hadamard_order(n)
    h = kronecker_hadamard(n)
    assert torch.equal(h, torch.kron(small_hadamard(k), sylvester(n // k)))
    assert _is_hadamard(h)
    eye = torch.eye(n, dtype=torch.float64)
    r = rotate(eye, torch.ones(n, dtype=torch.float64))  # row i: H e_i = column i of H
    torch.testing.assert_close(r.T, h / math.sqrt(n), rtol=0, atol=1e-12)


def test_random_signs_and_inverse():
    """rotate = H D with D the random signs; unrotate is its inverse (H_12 of Paley I is not symmetric)."""
    n, signs = 384, random_hadamard(384, 5).double()
    assert not torch.equal(small_hadamard(12), small_hadamard(12).T)
    x = torch.randn(7, n, dtype=torch.float64)
    h = kronecker_hadamard(n) / math.sqrt(n)
    torch.testing.assert_close(rotate(x, signs), (x * signs) @ h.T, rtol=0, atol=1e-12)
    torch.testing.assert_close(unrotate(rotate(x, signs), signs), x, rtol=0, atol=1e-12)


@pytest.mark.parametrize("n,k", [(14336, 28), (9984, 156)])
def test_wide_rotations_are_orthogonal_and_kronecker_without_forming_them(n, k):
    """Llama-3-8B's MLP width 14336 = 28 x 512 and 9984 = 156 x 64 (Williamson): inner products kept, columns
    are H_K[:, a] (x) H_{n/K}[:, b]."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, n, dtype=torch.float64, generator=g)
    ones = torch.ones(n, dtype=torch.float64)
    y = rotate(x, ones)
    torch.testing.assert_close(y @ y.T, x @ x.T, rtol=1e-10, atol=1e-8)
    hk, hp = small_hadamard(k), sylvester(n // k)
    for i in (0, 1, n // k - 1, n // k, 9000, n - 1):
        col = rotate(torch.nn.functional.one_hot(torch.tensor(i), n).double(), ones) * math.sqrt(n)
        torch.testing.assert_close(col, torch.kron(hk[:, i // (n // k)], hp[:, i % (n // k)]), rtol=0, atol=1e-9)


def test_block_construction_is_block_diagonal_and_differs_from_kronecker():
    n = 384
    r = rotate(torch.eye(n, dtype=torch.float64), torch.ones(n, dtype=torch.float64), "block")
    h128 = sylvester(128) / math.sqrt(128)
    torch.testing.assert_close(r, torch.block_diag(h128, h128, h128), rtol=0, atol=1e-12)
    assert not torch.allclose(r, rotate(torch.eye(n, dtype=torch.float64), torch.ones(n, dtype=torch.float64)))
    with pytest.raises(ValueError, match="nestquant.quant.rotation"):
        rotate(torch.eye(4), torch.ones(4), "dense")
