"""Identities of the NestQuant quantizers (src/methods/nestquant/quant.py)."""

import math

import pytest
import torch

from methods import kernels
from methods.kernels import reference
from methods.nestquant.quant import (
    E8_NSM,
    WEIGHT_BETAS,
    fwht,
    ldlq,
    nestquant,
    nestquant_rate,
    proxy_loss,
    random_hadamard,
    rotate,
    rtn,
    rtn_rate,
    uniform_clipped,
)


@pytest.mark.parametrize("n", [8, 128, 384])
def test_randomized_hadamard_is_orthogonal(n):
    signs = random_hadamard(n, seed=1)
    m = rotate(torch.eye(n, dtype=torch.float64), signs.double())
    torch.testing.assert_close(m @ m.T, torch.eye(n, dtype=torch.float64))


def test_fwht_matches_the_sylvester_matrix():
    h = torch.tensor([[1.0]])
    for _ in range(3):
        h = torch.cat([torch.cat([h, h], 1), torch.cat([h, -h], 1)], 0)
    x = torch.randn(5, 8)
    torch.testing.assert_close(fwht(x), x @ h.T / math.sqrt(8))


def test_fwht_is_the_butterfly_of_the_published_run_bit_for_bit():
    """fwht writes its butterflies into two buffers; the numbers are those of the published run's version, which
    stacked (a + b, a - b) stage by stage: the same float sums in the same order, so equal bit for bit (a
    stand-in for it is written here). The input is left as it was."""

    def stacked(x):
        n, y, h = x.shape[-1], x.reshape(-1, x.shape[-1]), 1
        while h < n:
            y = y.view(-1, n // (2 * h), 2, h)
            y = torch.stack((y[:, :, 0] + y[:, :, 1], y[:, :, 0] - y[:, :, 1]), dim=2).view(-1, n)
            h *= 2
        return (y / math.sqrt(n)).view(x.shape)

    x = torch.randn(3, 7, 64, generator=torch.Generator().manual_seed(0))
    before = x.clone()
    assert torch.equal(fwht(x), stacked(x))
    assert torch.equal(x, before)


def test_rate_formula():
    assert nestquant_rate(14, 4) == pytest.approx(math.log2(14) + 2 / 8)  # ≈ 4.057 (paper: "q=14 ≈ 4.06")
    assert nestquant_rate(16, 4, row_len=128) == pytest.approx(4 + 0.25 + 16 / 128)
    assert rtn_rate(4, 64, 512) == pytest.approx(4.25)


def test_round_trip_is_exact_inside_the_voronoi_region():
    """Points beta * (Voronoi representatives of qE8) are lattice points that are not overloaded."""
    q, beta = 14, 0.3
    codes = torch.randint(0, q, (500, 8))
    y = reference.nestquant_decode_coords(codes, q)
    x = beta * y
    c, i = kernels.nestquant_encode(x, q, torch.tensor([beta]))
    torch.testing.assert_close(kernels.nestquant_decode(c, i, q, torch.tensor([beta])), x, atol=1e-5, rtol=0)


def test_granular_error_is_the_e8_second_moment():
    """Without overload the error is uniform on beta * Voronoi(E8): E||e||^2 / 8 = G(E8) beta^2."""
    q, beta = 256, 0.05  # q * beta * packing radius 0.707 = 9 >> |x| ~ 2.8: no overload
    x = torch.randn(200_000, 8)
    c, i = kernels.nestquant_encode(x, q, torch.tensor([beta]))
    err = (kernels.nestquant_decode(c, i, q, torch.tensor([beta])) - x).pow(2).mean().item()
    assert err / beta**2 == pytest.approx(E8_NSM, rel=0.02)
    assert err / beta**2 < 1 / 12  # better than the cubic lattice (scalar rounding) at the same density


def test_nestquant_beats_uniform_with_optimal_clipping_at_equal_rate():
    """Gaussian entries at ~4 bits: NestQuant (4.06 bits) vs a 16-level uniform quantizer (4 bits)."""
    torch.manual_seed(0)
    x = torch.randn(4096, 64)
    q = 14
    mse_nq = (nestquant(x, q, [b / q for b in WEIGHT_BETAS]) - x).pow(2).mean().item()
    mse_u = (uniform_clipped(x, 16) - x).pow(2).mean().item()
    assert mse_nq < mse_u


def test_uniform_clipping_is_optimal_over_its_grid():
    x = torch.randn(20000)
    best = (uniform_clipped(x, 8) - x).pow(2).mean()
    for r in (1.5, 2.5, 3.5):
        assert best <= (uniform_clipped(x, 8, ratios=[r]) - x).pow(2).mean() + 1e-9


def test_rtn_per_group_error_is_at_most_half_a_step():
    x = torch.randn(16, 64)
    y = rtn(x, 4, group_size=16)
    step = x.reshape(16, 4, 16).abs().amax(-1, keepdim=True) / 7
    assert ((y - x).reshape(16, 4, 16).abs() <= step / 2 + 1e-3).all()


@pytest.mark.parametrize("kind", ["rtn", "nestquant"])
def test_ldlq_lowers_the_proxy_loss_vs_direct_quantization(kind):
    torch.manual_seed(0)
    k = 64
    a = torch.randn(k, k) / math.sqrt(k)
    x = torch.randn(2048, k) @ (torch.eye(k) + 2 * a)  # correlated inputs
    h = x.T @ x / x.shape[0]
    w = torch.randn(32, k)
    s = w.norm(dim=1, keepdim=True) / math.sqrt(k)
    if kind == "rtn":
        qfun = lambda b: rtn(b, 3, group_size=8)  # noqa: E731
    else:
        qfun = lambda b: nestquant(b / s, 8, [v / 8 for v in WEIGHT_BETAS], scale_rows=False) * s  # noqa: E731
    direct = torch.cat([qfun(w[:, i : i + 8]) for i in range(0, k, 8)], 1)
    fed = ldlq(w, h, qfun, damp=0.0)
    assert proxy_loss(w, fed, h) < 0.9 * proxy_loss(w, direct, h)


def test_ldlq_with_identity_hessian_is_direct_quantization():
    w = torch.randn(8, 32)
    qfun = lambda b: rtn(b, 4, group_size=8)  # noqa: E731
    direct = torch.cat([qfun(w[:, i : i + 8]) for i in range(0, 32, 8)], 1)
    torch.testing.assert_close(ldlq(w, torch.eye(32), qfun, damp=0.0), direct)
