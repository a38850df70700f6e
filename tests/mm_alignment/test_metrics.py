"""Alignment metrics: unbiased CKA against the U-statistic definition and its invariances; mutual
k-NN on hand-made cases."""

import itertools
import math

import numpy as np
import pytest
import torch

from methods.mm_alignment.metrics import alignment, hsic_unbiased, layer_pair_alignment, mutual_knn, unbiased_cka


def _rand(n, d, seed):
    return torch.randn(n, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def hsic_u_statistic(K, L):
    """Unbiased HSIC written as the U-statistic E[k_ij l_ij] + E[k_ij] E[l_qr] - 2 E[k_ij l_iq] over
    distinct indices (Song et al. 2012), summed by brute force."""
    n = K.shape[0]
    t1 = sum(K[i, j] * L[i, j] for i, j in itertools.permutations(range(n), 2)) / math.perm(n, 2)
    t2 = sum(K[i, j] * L[q, r] for i, j, q, r in itertools.permutations(range(n), 4)) / math.perm(n, 4)
    t3 = sum(K[i, j] * L[i, q] for i, j, q in itertools.permutations(range(n), 3)) / math.perm(n, 3)
    return t1 + t2 - 2 * t3


def test_hsic_matches_u_statistic():
    a, b = _rand(7, 3, 0), _rand(7, 4, 1)
    K, L = (a @ a.T).numpy(), (b @ b.T).numpy()
    assert float(hsic_unbiased(torch.as_tensor(K), torch.as_tensor(L))) == pytest.approx(
        hsic_u_statistic(K, L), rel=1e-9, abs=1e-12
    )


def test_cka_self_is_one_and_invariant():
    a = _rand(64, 10, 2)
    assert unbiased_cka(a, a) == pytest.approx(1.0, abs=1e-12)
    q, _ = torch.linalg.qr(_rand(10, 10, 3))
    b = 3.7 * a @ q
    assert unbiased_cka(a, b) == pytest.approx(1.0, abs=1e-10)
    c = _rand(64, 6, 4)
    assert unbiased_cka(a @ q * 0.2, c) == pytest.approx(unbiased_cka(a, c), abs=1e-10)


def test_cka_of_independent_representations_is_near_zero():
    vals = [unbiased_cka(_rand(400, 8, s), _rand(400, 8, 100 + s)) for s in range(5)]
    assert abs(np.mean(vals)) < 0.02
    assert unbiased_cka(_rand(400, 8, 0), _rand(400, 8, 0) + 0.1 * _rand(400, 8, 9)) > 0.95


def _circle(deg):
    t = torch.tensor(deg, dtype=torch.float64) * math.pi / 180
    return torch.stack([t.cos(), t.sin()], dim=1)


def test_mutual_knn_hand_made():
    a = _circle([0, 10, 20, 90, 100, 110])
    assert mutual_knn(a, a, k=2) == 1.0
    # points 2 and 3 swap places in B: overlaps per point 1, 1, 0, 0, 1, 1 of k = 2 -> 4 / 12
    b = _circle([0, 10, 90, 20, 100, 110])
    assert mutual_knn(a, b, k=2) == pytest.approx(1 / 3)
    # two clusters {0,1,2} and {3,4,5}: with k = 2 the neighbours are the own cluster in both
    c = _circle([0, 5, 25, 150, 170, 175])
    assert mutual_knn(a, c, k=2) == 1.0
    with pytest.raises(ValueError, match="k < n_samples"):
        mutual_knn(a, b, k=6)


def test_alignment_normalises_rows_and_layer_pairs_take_every_pair():
    a = _rand(50, 5, 5)
    scales = torch.linspace(0.1, 10, 50, dtype=torch.float64)[:, None]
    for m in ("mutual_knn", "unbiased_cka"):
        assert alignment(a, a * scales, m, k=5) == pytest.approx(1.0, abs=1e-10)
    grid = layer_pair_alignment([a, _rand(50, 5, 6)], [_rand(50, 5, 7), a, a * 2], "unbiased_cka", k=5)
    assert grid.shape == (2, 3) and grid.max() == pytest.approx(1.0) and grid[0, 1] == pytest.approx(1.0)
