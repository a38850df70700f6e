"""Properties of the pure-PyTorch references themselves (the oracle of the compiled ops)."""

import itertools
import math

import pytest
import torch

from methods import kernels as K
from methods.kernels import reference as R

BETAS = torch.tensor([4.0, 5.5, 7.0, 18.0]) / 14  # the authors' weight betas, divided by q


def in_e8(t: torch.Tensor) -> torch.Tensor:
    two = 2 * t
    integral = (two == torch.round(two)).all(-1)
    par = torch.remainder(torch.round(two), 2)
    same_coset = (par == par[..., :1]).all(-1)
    even_sum = torch.remainder(torch.round(t.sum(-1)), 2) == 0
    return integral & same_coset & even_sum & ((t.sum(-1) - torch.round(t.sum(-1))).abs() < 1e-6)


def test_generator_is_e8():
    g = R.E8_GENERATOR
    assert abs(abs(torch.linalg.det(g).item()) - 1) < 1e-12  # unimodular
    gram = g @ g.T
    assert torch.equal(gram, torch.round(gram)) and (torch.diagonal(gram) % 2 == 0).all()  # even
    assert in_e8(g.float()).all()


def test_e8_nearest_brute_force():
    torch.manual_seed(0)
    x = torch.randn(40, 8) * 2
    offsets = torch.tensor(list(itertools.product([-1, 0, 1, 2], repeat=8)), dtype=torch.float32)
    got = R.e8_nearest(x)
    assert in_e8(got).all()
    for i in range(len(x)):
        best = math.inf
        for shift in (0.0, 0.5):
            cand = torch.floor(x[i] - shift) + offsets
            cand = cand[torch.remainder(cand.sum(-1), 2) == 0] + shift
            best = min(best, ((cand - x[i]) ** 2).sum(-1).min().item())
        assert ((got[i] - x[i]) ** 2).sum().item() <= best + 1e-5


def test_e8_nearest_fixed_points_and_zero():
    pts = (torch.randint(-3, 4, (64, 8)).double() @ R.E8_GENERATOR).float()
    assert torch.equal(R.e8_nearest(pts), pts)
    assert torch.equal(R.e8_nearest(torch.zeros(3, 8)), torch.zeros(3, 8))
    # D8 rule: rounding gives (1, 0, ..., 0) (odd sum); the largest rounding error (0.45, last) is re-rounded
    assert torch.equal(
        R.d8_nearest(torch.tensor([0.6, 0, 0, 0, 0, 0, 0, 0.45])), torch.tensor([1.0, 0, 0, 0, 0, 0, 0, 1])
    )
    assert torch.equal(R.d8_nearest(torch.tensor([0.6, 0, 0, 0, 0, 0, 0, 0.1])), torch.zeros(8))


@pytest.mark.parametrize("q", [2, 7, 14])
def test_nestquant_roundtrip_inside_voronoi(q):
    torch.manual_seed(q)
    beta = torch.tensor([0.3])
    c = torch.randint(0, q, (256, 8))
    t = R.nestquant_decode_coords(c, q)  # representatives inside the Voronoi region of qE8
    x = beta * t
    codes, idx = R.nestquant_encode(x, q, beta)
    assert codes.dtype == torch.uint8 and int(codes.max()) < q and (idx == 0).all()
    assert torch.allclose(R.nestquant_decode(codes, idx, q, beta), x, atol=1e-5)
    # the decoded point differs from c G by a point of qE8
    diff = (c.double() @ R.E8_GENERATOR).float() - t
    assert in_e8(diff / q).all()


def test_nestquant_beta_choice_is_min_error():
    torch.manual_seed(1)
    x = torch.randn(500, 8) * 1.3
    codes, idx = R.nestquant_encode(x, 14, BETAS)
    err = ((R.nestquant_decode(codes, idx, 14, BETAS) - x) ** 2).sum(-1)
    for j in range(len(BETAS)):
        c1, i1 = R.nestquant_encode(x, 14, BETAS[j : j + 1])
        e1 = ((R.nestquant_decode(c1, i1, 14, BETAS[j : j + 1]) - x) ** 2).sum(-1)
        assert (err <= e1 + 1e-6).all()
    assert len(set(idx.tolist())) > 1  # several betas are used
    # at ~4 bits per entry the MSE of a unit Gaussian is small (uniform 4-bit scalar gives ~0.01)
    assert (err.mean() / 8).item() < 0.02


def test_nestquant_matmul_matches_decode():
    torch.manual_seed(2)
    w = torch.randn(12, 24)
    codes, idx = R.nestquant_encode(w.reshape(12, 3, 8), 14, BETAS)
    x = torch.randn(5, 24)
    wd = R.nestquant_decode(codes, idx, 14, BETAS).reshape(12, 24)
    assert torch.allclose(R.nestquant_matmul(x, codes, idx, 14, BETAS, (12, 24)), x @ wd.T, atol=1e-5)


@pytest.mark.parametrize("k,gs", [(64, 32), (37, 8), (100, 128), (33, 5)])
@pytest.mark.parametrize("symmetric", [True, False])
def test_int4_pack_roundtrip(k, gs, symmetric):
    torch.manual_seed(k)
    n, g = 7, -(-k // gs)
    s = torch.rand(n, g) + 0.1
    if symmetric:
        q, z = torch.randint(-8, 8, (n, k)), None
        want = s.repeat_interleave(gs, 1)[:, :k] * q
    else:
        q, z = torch.randint(0, 16, (n, k)), torch.randint(0, 16, (n, g)).float()
        want = s.repeat_interleave(gs, 1)[:, :k] * (q - z.repeat_interleave(gs, 1)[:, :k])
    w = K.pack_int4(q, s, z, gs)
    assert w.packed.shape == (n, -(-k // 2)) and w.packed.dtype == torch.uint8
    assert torch.equal(R.unpack_int4(w.packed, k), q + 8 if symmetric else q)
    assert torch.allclose(w.dequantize(), want)
    assert (
        w.packed[0, 0].item()
        == ((q[0, 0] + (8 if symmetric else 0)) | ((q[0, 1] + (8 if symmetric else 0)) << 4)).item()
    )


@pytest.mark.parametrize("symmetric", [True, False])
def test_quantize_int4_rtn_error(symmetric):
    torch.manual_seed(3)
    w = torch.randn(16, 100)
    q = K.quantize_int4_rtn(w, 32, symmetric)
    step = q.scales.repeat_interleave(32, 1)[:, :100]
    assert ((q.dequantize() - w).abs() <= step / 2 + 1e-6).all()
    assert torch.equal(K.quantize_int4_rtn(torch.zeros(3, 40), 16, symmetric).dequantize(), torch.zeros(3, 40))


def random_24(n, k, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randint(-8, 8, (n, k), generator=g)
    keep = torch.zeros(n, -(-k // 4) * 4, dtype=torch.bool)
    scores = torch.rand(keep.shape, generator=g).reshape(n, -1, 4)
    top = scores.topk(2, -1).indices
    keep = keep.reshape(n, -1, 4).scatter(-1, top, True).reshape(n, -1)[:, :k]
    return torch.where(keep, q, 0)


def test_sparse24_metadata_positions():
    q = torch.tensor([[0, 3, 0, -2, 5, 0, 0, 0, 0, 0, 0, 0]])
    w = K.pack_sparse24_int4(q, torch.ones(1, 1), 128)
    assert w.values.tolist() == [[(3 + 8) | ((-2 + 8) << 4), (5 + 8) | (8 << 4), 8 | (8 << 4)]]
    # group 0: positions 1, 3 -> 0b1101; group 1: 0 and filler 1 -> 0b0100; group 2 (no kept): 0, 1
    assert w.meta.tolist() == [[(1 | 3 << 2) | ((0 | 1 << 2) << 4), 0 | 1 << 2]]
    assert torch.equal(w.dequantize(), q.float())


@pytest.mark.parametrize("k,gs", [(64, 32), (30, 8), (130, 128), (9, 3)])
def test_sparse24_roundtrip(k, gs):
    n = 5
    q = random_24(n, k, seed=k)
    s = torch.rand(n, -(-k // gs)) + 0.5
    w = K.pack_sparse24_int4(q, s, gs)
    assert w.values.shape == (n, -(-k // 4)) and w.meta.shape == (n, -(-k // 8))
    assert torch.allclose(w.dequantize(), s.repeat_interleave(gs, 1)[:, :k] * q)
    x, lo_l, lo_r = torch.randn(3, k), torch.randn(n, 2), torch.randn(2, k)
    y = R.sparse24_int4_linear(x, w.values, w.meta, w.scales, gs, k, lo_l, lo_r)
    assert torch.allclose(y, x @ w.dequantize().T + x @ lo_r.T @ lo_l.T, atol=1e-4)


def test_sparse24_rejects_dense():
    with pytest.raises(ValueError, match="2:4"):
        K.pack_sparse24_int4(torch.ones(2, 8, dtype=torch.int64), torch.ones(2, 1), 128)


def test_attention_reference():
    torch.manual_seed(4)
    q, k, v = torch.randn(2, 3, 16), torch.randn(2, 3, 50, 16), torch.randn(2, 3, 50, 16)
    full = torch.nn.functional.scaled_dot_product_attention(q[:, :, None], k, v)[:, :, 0]
    assert torch.allclose(R.decode_attention(q, k, v, 50, 0, 0.25), full, atol=1e-5)
    sub = torch.cat([torch.arange(4), torch.arange(40, 50)])
    part = torch.nn.functional.scaled_dot_product_attention(q[:, :, None], k[:, :, sub], v[:, :, sub])[:, :, 0]
    assert torch.allclose(R.decode_attention(q, k, v, 4, 10, 0.25), part, atol=1e-5)
    o, os_, acc = R.spec_decode_attention(q, k, v, 4, 10, 1e9, 0.25)
    assert acc.all() and torch.allclose(o, full, atol=1e-5)
    o, os_, acc = R.spec_decode_attention(q, k, v, 4, 10, 0.0, 0.25)
    assert not acc.any()
    o, os_, acc = R.spec_decode_attention(q, k, v, 30, 30, 1e-3, 0.25)  # sink + window >= T: spec is exact
    assert acc.all() and torch.equal(o, os_)


def test_fallback_warns_once_and_uses_the_reference():
    import os
    import subprocess
    import sys

    code = (
        "import warnings, torch, methods.kernels as K\n"
        "assert not K.extension_available()\n"
        "w = K.quantize_int4_rtn(torch.randn(4, 32), 16)\n"
        "x = torch.randn(2, 32)\n"
        "with warnings.catch_warnings(record=True) as rec:\n"
        "    warnings.simplefilter('always')\n"
        "    y = K.int4_linear(x, w); K.e8_nearest(torch.randn(3, 8))\n"
        "assert len(rec) == 1 and 'not built' in str(rec[0].message), [str(r.message) for r in rec]\n"
        "assert torch.allclose(y, x @ w.dequantize().T, atol=1e-5)\n"
    )
    env = dict(os.environ, ICML25_KERNELS="reference")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
