"""The AVX-512 VNNI paths of int4_linear / sparse24_int4_linear, the capability dispatch and its forced fallback.

Each case runs twice: with the dispatch as this CPU allows and with ICML25_CPU_VNNI=0 (the fp32 paths), both
against the pure-PyTorch reference on awkward shapes (K not a multiple of 64, odd N, batch 1 and 3). The VNNI
path quantizes activations per (row, group) to int16; it must equal the reference evaluated on those quantized
activations (an identity) and lie within the rigorous bound of the activation rounding on the fp32 reference."""

import pytest
import torch

from methods.kernels import reference as R

from .test_reference import random_24

OPS = lambda: torch.ops.icml25  # noqa: E731
# (N, K, group size); K = 8400: an int16 activation row over half of L1d, and a partial group;
# group sizes 128 and 256 at batch 1: the int4 byte-plane pass (1 and 2 lines of 128 columns per group, odd N: a
# last weight row outside the passes of 4)
SHAPES = [(7, 300, 64), (33, 257, 128), (5, 1000, 192), (9, 128, 64), (16, 64, 64), (10, 8400, 128), (6, 600, 256)]
# batches: tiles of 4 rows and their remainder (1, 3); k-major chunks of 8, 16 and 32 lanes (int4 from 8 rows, 2:4
# from 12); 37 and 40 = a chunk of 32 + 5 / 8 rows, int4's 5 through the tiles, 2:4's 5 and 8 through the gather
BATCHES = [1, 3, 8, 11, 12, 17, 37, 40]


@pytest.fixture(autouse=True)
def default_plans(ext):
    """The built-in choice of path (no tuned plan left by earlier tests), so that each batch takes the path named
    below; tests/kernels/test_cpu_tuning.py covers every plan."""
    from methods.kernels import tuning

    tuning.reset()
    yield
    tuning.reset()


@pytest.fixture(params=["dispatch", "fallback"])
def path(request, monkeypatch, ext):
    if request.param == "fallback":
        monkeypatch.setenv("ICML25_CPU_VNNI", "0")
        assert not OPS().cpu_vnni_enabled(False) and not OPS().cpu_vnni_enabled(True)
    else:
        monkeypatch.delenv("ICML25_CPU_VNNI", raising=False)
    return request.param


def close(a, b, rel=1e-4):
    assert a.shape == b.shape and a.dtype == b.dtype
    err, tol = (a - b).abs().max().item(), rel * (1 + b.abs().max().item())
    assert err <= tol, (err, tol)


def quantized_act(x, k, gs):
    """The VNNI path's activations: int16 per (row, whole group), a = max|x| / 32767; the partial last group stays fp32."""
    xq = x.clone()
    gf = k // gs
    g = x[:, : gf * gs].reshape(x.shape[0], gf, gs)
    a = g.abs().amax(-1, keepdim=True) / 32767
    inv = torch.where(a > 0, 32767 / g.abs().amax(-1, keepdim=True), torch.zeros_like(a))
    q = torch.clamp(torch.round(g * inv), -32767, 32767)
    xq[:, : gf * gs] = (q * a).reshape(x.shape[0], -1)
    half = torch.zeros_like(x)  # the rounding bound |x - xq| <= a / 2 (0 on the fp32 tail)
    half[:, : gf * gs] = (a / 2).expand_as(g).reshape(x.shape[0], -1)
    return xq, half


def vnni_taken(sparse24, gs, k):
    return OPS().cpu_vnni_enabled(sparse24) and gs % 64 == 0 and k >= gs


@pytest.mark.parametrize("m", BATCHES)
@pytest.mark.parametrize("n,k,gs", SHAPES)
@pytest.mark.parametrize("symmetric", [True, False])
def test_int4_paths_match_reference(ext, path, m, n, k, gs, symmetric):
    g = torch.Generator().manual_seed(m * 7 + k)
    w = ext.quantize_int4_rtn(torch.randn(n, k, generator=g), gs, symmetric)
    x = torch.randn(m, k, generator=g)
    got = OPS().int4_linear(x, w.packed, w.scales, w.zeros, gs, k)
    close(got, R.int4_linear(x, w.packed, w.scales, w.zeros, gs, k))
    if vnni_taken(False, gs, k):
        xq, half = quantized_act(x, k, gs)
        close(got, R.int4_linear(xq, w.packed, w.scales, w.zeros, gs, k), rel=1e-5)
        bound = half.abs() @ w.dequantize().abs().T  # |sum_k w_k (x_k - xq_k)| <= sum_k |w_k| a_k / 2
        ref = R.int4_linear(x, w.packed, w.scales, w.zeros, gs, k)
        assert ((got - ref).abs() <= bound + 1e-5 * (1 + ref.abs().max())).all()


@pytest.mark.parametrize("m", BATCHES)
@pytest.mark.parametrize("n,k,gs", SHAPES)
def test_sparse24_paths_match_reference(ext, path, m, n, k, gs):
    g = torch.Generator().manual_seed(m * 11 + k)
    q = random_24(n, k, seed=k + m)
    q[:, ::5] = 0  # some groups with fewer than 2 kept entries
    w = ext.pack_sparse24_int4(q, torch.rand(n, -(-k // gs), generator=g) + 0.1, gs)
    x = torch.randn(m, k, generator=g)
    got = OPS().sparse24_int4_linear(x, w.values, w.meta, w.scales, gs, k)
    close(got, R.sparse24_int4_linear(x, w.values, w.meta, w.scales, gs, k))
    if vnni_taken(True, gs, k):
        xq, _ = quantized_act(x, k, gs)
        close(got, R.sparse24_int4_linear(xq, w.values, w.meta, w.scales, gs, k), rel=1e-5)


def test_extreme_codes_and_scales(ext, path):
    q = torch.full((3, 256), -8)
    w = ext.pack_int4(q + 8, torch.ones(3, 2), torch.zeros(3, 2), 128)  # u = 0 .. with zero point 0: all weights 0
    assert torch.equal(ext.int4_linear(torch.randn(2, 256), w), torch.zeros(2, 3))
    w = ext.pack_int4(q, torch.ones(3, 2), None, 128)  # symmetric, every weight -8
    assert torch.equal(ext.int4_linear(torch.ones(1, 256), w), torch.full((1, 3), -2048.0))
    x = torch.full((2, 256), 1e4)
    close(ext.int4_linear(x, w), torch.full((2, 3), -8 * 256 * 1e4))
    s = ext.pack_sparse24_int4(torch.tensor([[-8, 7, 0, 0] * 64]), torch.ones(1, 2), 128)
    close(ext.sparse24_int4_linear(torch.ones(3, 256), s), torch.full((3, 1), -64.0))
    assert torch.equal(ext.sparse24_int4_linear(torch.zeros(1, 256), s), torch.zeros(1, 1))


def test_threads_do_not_change_vnni_results(ext, path):
    w = ext.quantize_int4_rtn(torch.randn(70, 512), 128)
    s = ext.pack_sparse24_int4(random_24(70, 512, seed=3), torch.rand(70, 4) + 0.1, 128)
    x = torch.randn(37, 512)  # 32 rows k-major + 5 through the tiles / gather
    n = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = ext.int4_linear(x, w), ext.sparse24_int4_linear(x, s)
    finally:
        torch.set_num_threads(n)
    assert torch.equal(one[0], ext.int4_linear(x, w)) and torch.equal(one[1], ext.sparse24_int4_linear(x, s))


def swap_some_slots(w, frac, seed):
    """The same matrix with the two slots of some groups of 4 swapped: positions decreasing there."""
    g = torch.Generator().manual_seed(seed)
    n, k4 = w.values.shape
    sw = torch.rand(n, k4, generator=g) < frac
    v = torch.where(sw, (w.values >> 4) | ((w.values & 15) << 4), w.values)
    nib = torch.stack([w.meta & 15, w.meta >> 4], -1).reshape(n, -1)[:, :k4]
    nib = torch.where(sw, (nib >> 2) | ((nib & 3) << 2), nib)
    if k4 % 2:
        nib = torch.cat([nib, nib.new_zeros(n, 1)], 1)
    return v, (nib[:, 0::2] | (nib[:, 1::2] << 4)).to(torch.uint8), int(sw.sum())


@pytest.mark.parametrize("m", [12, 33])
def test_sparse24_decreasing_positions(ext, path, m):
    """Slots whose positions are not increasing (pack_sparse24_int4 never writes them) take the scalar loop of their
    scale group in the k-major path; the product is the same matrix's."""
    n, k, gs = 20, 640, 128
    w = ext.pack_sparse24_int4(random_24(n, k, seed=5), torch.rand(n, k // gs) + 0.1, gs)
    v, meta, swapped = swap_some_slots(w, 0.02, seed=m)
    assert swapped > 0 and not torch.equal(meta, w.meta)
    x = torch.randn(m, k)
    want = R.sparse24_int4_linear(x, w.values, w.meta, w.scales, gs, k)
    close(R.sparse24_int4_linear(x, v, meta, w.scales, gs, k), want, rel=1e-6)  # the swap keeps the matrix
    close(OPS().sparse24_int4_linear(x, v, meta, w.scales, gs, k), want)


@pytest.mark.parametrize("m", [1, 3, 16])
@pytest.mark.parametrize("fmt", ["int4", "sparse24"])
def test_kmajor_forced_at_small_batches(ext, monkeypatch, fmt, m):
    """ICML25_KMAJOR_ROWS_*=1 sends every batch k-major (padding lanes of an 8- or 16-lane chunk): the result equals
    the reference on the int16 activations, as the row tiles' does."""
    n, k, gs = 9, 384, 128
    if not vnni_taken(fmt == "sparse24", gs, k):
        pytest.skip("no AVX-512 VNNI (+ VBMI for 2:4) on this CPU")
    monkeypatch.setenv("ICML25_KMAJOR_ROWS_" + fmt.upper(), "1")
    x = torch.randn(m, k)
    xq, _ = quantized_act(x, k, gs)
    if fmt == "int4":
        w = ext.quantize_int4_rtn(torch.randn(n, k), gs, False)
        got = OPS().int4_linear(x, w.packed, w.scales, w.zeros, gs, k)
        close(got, R.int4_linear(xq, w.packed, w.scales, w.zeros, gs, k), rel=1e-5)
    else:
        w = ext.pack_sparse24_int4(random_24(n, k, seed=m), torch.rand(n, k // gs) + 0.1, gs)
        got = OPS().sparse24_int4_linear(x, w.values, w.meta, w.scales, gs, k)
        close(got, R.sparse24_int4_linear(xq, w.values, w.meta, w.scales, gs, k), rel=1e-5)
