"""The CUDA ops against the references: the same comparisons as the CPU tests; skipped without a GPU."""

import pytest
import torch

from methods.kernels import reference as R

from .test_reference import BETAS, random_24

CUDA_OPS = torch.cuda.is_available() and torch._C._dispatch_has_kernel_for_dispatch_key("icml25::int4_linear", "CUDA")
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")


@pytest.fixture(scope="module")
def kc(ext):
    if not torch._C._dispatch_has_kernel_for_dispatch_key("icml25::int4_linear", "CUDA"):
        pytest.fail(
            "a GPU is present but the extension has no CUDA kernels (torch without CUDA, or nvcc missing at build time)"
        )
    return ext


def close(a, b, rel=1e-4):
    a = a.cpu()
    assert a.shape == b.shape and (a - b).abs().max().item() <= rel * (1 + b.abs().max().item())


@pytest.mark.parametrize("m", [1, 8, 13, 32])
@pytest.mark.parametrize("n,k,gs", [(7, 64, 32), (33, 100, 64), (16, 257, 128), (9, 70, 7)])
def test_int4_linear_cuda(kc, m, n, k, gs):
    g = torch.Generator().manual_seed(m + k)
    w = kc.quantize_int4_rtn(torch.randn(n, k, generator=g), gs, symmetric=False)
    x = torch.randn(m, k, generator=g)
    y = torch.ops.icml25.int4_linear(x.cuda(), w.packed.cuda(), w.scales.cuda(), w.zeros.cuda(), gs, k)
    close(y, R.int4_linear(x, w.packed, w.scales, w.zeros, gs, k))


@pytest.mark.parametrize("m", [1, 8, 11])
@pytest.mark.parametrize("n,k,gs", [(7, 64, 32), (16, 300, 128), (5, 30, 8), (6, 256, 12)])
@pytest.mark.parametrize("rank", [0, 3])
def test_sparse24_linear_cuda(kc, m, n, k, gs, rank):
    g = torch.Generator().manual_seed(m + k + rank)
    w = kc.pack_sparse24_int4(random_24(n, k, seed=k), torch.rand(n, -(-k // gs), generator=g) + 0.1, gs)
    x = torch.randn(m, k, generator=g)
    lo = (torch.randn(n, rank, generator=g), torch.randn(rank, k, generator=g)) if rank else (None, None)
    y = torch.ops.icml25.sparse24_int4_linear(
        x.cuda(),
        w.values.cuda(),
        w.meta.cuda(),
        w.scales.cuda(),
        gs,
        k,
        *(t.cuda() if t is not None else None for t in lo),
    )
    close(y, R.sparse24_int4_linear(x, w.values, w.meta, w.scales, gs, k, *lo))


# Shapes the decode-GEMV path takes (K and the group size multiples of 32, 16-byte aligned pointers): row
# counts that leave a partial block of 2 or 4 rows, K whose 32-column units leave a partial last stride of
# the block's threads, batches of every chunk size and of several launches (chunks of at most 8 rows); with
# 128-column groups, int4 batches of 2-8 take the tensor-core path (a partial last chunk of 512 columns at 640).
GEMV_SHAPES = [(37, 1024, 128), (5, 2080, 32), (3, 4160, 64), (21, 640, 128), (9, 768, 256)]
GEMV_BATCHES = [1, 2, 3, 5, 8, 9, 20]


def misaligned(t):
    """The same values on the GPU at a 4-byte offset: contiguous, but not 16-byte aligned (the general path)."""
    buf = torch.empty(t.numel() + 1, dtype=t.dtype, device="cuda")
    out = buf[1:].view(t.shape)
    out.copy_(t)
    assert out.is_contiguous() and out.data_ptr() % 16 != 0
    return out


@pytest.mark.parametrize("m", GEMV_BATCHES)
@pytest.mark.parametrize("n,k,gs", GEMV_SHAPES)
def test_int4_gemv_path_cuda(kc, m, n, k, gs):
    g = torch.Generator().manual_seed(3 * m + k)
    w = kc.quantize_int4_rtn(torch.randn(n, k, generator=g), gs, symmetric=False)
    x = torch.randn(m, k, generator=g)
    ref = R.int4_linear(x, w.packed, w.scales, w.zeros, gs, k)
    args = (w.packed.cuda(), w.scales.cuda(), w.zeros.cuda(), gs, k)
    close(torch.ops.icml25.int4_linear(x.cuda(), *args), ref)
    close(torch.ops.icml25.int4_linear(misaligned(x.cuda()), *args), ref)


@pytest.mark.parametrize("m", GEMV_BATCHES)
@pytest.mark.parametrize("n,k,gs", GEMV_SHAPES)
def test_sparse24_gemv_path_cuda(kc, m, n, k, gs):
    g = torch.Generator().manual_seed(5 * m + k)
    w = kc.pack_sparse24_int4(random_24(n, k, seed=m), torch.rand(n, k // gs, generator=g) + 0.1, gs)
    x = torch.randn(m, k, generator=g)
    ref = R.sparse24_int4_linear(x, w.values, w.meta, w.scales, gs, k)
    v, meta, s = w.values.cuda(), w.meta.cuda(), w.scales.cuda()
    close(torch.ops.icml25.sparse24_int4_linear(x.cuda(), v, meta, s, gs, k, None, None), ref)
    close(torch.ops.icml25.sparse24_int4_linear(x.cuda(), misaligned(v), meta, s, gs, k, None, None), ref)


@pytest.mark.parametrize(
    "env",
    [
        {"ICML25_CUDA_SK_ROWS": "32"},
        {"ICML25_CUDA_SK_ROWS": "64"},
        {"ICML25_CUDA_SK_ROWS": "128"},
        {"ICML25_CUDA_SK_R": "2"},
        {"ICML25_CUDA_TC": "0"},
        {"ICML25_CUDA_TC": "1"},
    ],
    ids=lambda e: "-".join(f"{k}={v}" for k, v in e.items()),
)
@pytest.mark.parametrize("m", [2, 3, 8])
def test_split_k_launch_shapes_cuda(kc, monkeypatch, env, m):
    """Every split-K launch shape, and the tensor cores for no pass or for every pass of 2-8 batch rows
    (benchmarks/cuda_bandwidth.py --explore), give the same products."""
    for key, val in env.items():
        monkeypatch.setenv(key, val)
    for n, k, gs in [(37, 1024, 128), (3, 4160, 64), (21, 640, 128)]:
        g = torch.Generator().manual_seed(m + k)
        x = torch.randn(m, k, generator=g)
        w = kc.quantize_int4_rtn(torch.randn(n, k, generator=g), gs, symmetric=False)
        y = torch.ops.icml25.int4_linear(x.cuda(), w.packed.cuda(), w.scales.cuda(), w.zeros.cuda(), gs, k)
        close(y, R.int4_linear(x, w.packed, w.scales, w.zeros, gs, k))
        sp = kc.pack_sparse24_int4(random_24(n, k, seed=m), torch.rand(n, k // gs, generator=g) + 0.1, gs)
        y = torch.ops.icml25.sparse24_int4_linear(
            x.cuda(), sp.values.cuda(), sp.meta.cuda(), sp.scales.cuda(), gs, k, None, None
        )
        close(y, R.sparse24_int4_linear(x, sp.values, sp.meta, sp.scales, gs, k))


@pytest.mark.parametrize("q", [2, 14, 255])
def test_lattice_cuda_bit_exact(kc, q):
    x = torch.randn(2049, 8, generator=torch.Generator().manual_seed(q)) * 2
    assert torch.equal(torch.ops.icml25.e8_nearest(x.cuda()).cpu(), R.e8_nearest(x))
    betas = BETAS * 14 / q
    c, i = torch.ops.icml25.nestquant_encode(x.cuda(), q, betas.cuda())
    rc, ri = R.nestquant_encode(x, q, betas)
    assert torch.equal(c.cpu(), rc) and torch.equal(i.cpu(), ri)
    assert torch.equal(
        torch.ops.icml25.nestquant_decode(c, i, q, betas.cuda()).cpu(), R.nestquant_decode(rc, ri, q, betas)
    )
    w = x[:2048].reshape(64, 32, 8)
    wc, wi = R.nestquant_encode(w, q, betas)
    xm = torch.randn(5, 256)
    y = torch.ops.icml25.nestquant_matmul(xm.cuda(), wc.cuda(), wi.cuda(), q, betas.cuda(), 64, 256)
    close(y, R.nestquant_matmul(xm, wc, wi, q, betas, (64, 256)))


@pytest.mark.parametrize("t,sink,window", [(1, 0, 0), (100, 4, 16), (1000, 32, 64), (64, 40, 40)])
def test_attention_cuda(kc, t, sink, window):
    g = torch.Generator().manual_seed(t)
    q, k, v = (
        torch.randn(2, 3, 24, generator=g),
        torch.randn(2, 3, t, 24, generator=g),
        torch.randn(2, 3, t, 24, generator=g),
    )
    sc = 24**-0.5
    if sink + window > 0:
        close(
            torch.ops.icml25.decode_attention(q.cuda(), k.cuda(), v.cuda(), sink, window, sc),
            R.decode_attention(q, k, v, sink, window, sc),
        )
    o, os_, acc = torch.ops.icml25.spec_decode_attention(q.cuda(), k.cuda(), v.cuda(), sink, window, 0.3, sc)
    ro, ros, racc = R.spec_decode_attention(q, k, v, sink, window, 0.3, sc)
    close(o, ro)
    close(os_, ros)
    sure = ((ro - ros).norm(dim=-1) / ro.norm(dim=-1) - 0.3).abs() > 1e-4
    assert torch.equal(acc.cpu()[sure], racc[sure])


def test_public_api_dispatches_to_cuda(kc):
    w = kc.quantize_int4_rtn(torch.randn(8, 64), 32)
    x = torch.randn(2, 64)
    cw = kc.Int4Weight(w.packed.cuda(), w.scales.cuda(), w.zeros.cuda(), 32, (8, 64))
    y = kc.int4_linear(x.cuda(), cw)
    assert y.is_cuda
    close(y, R.int4_linear(x, w.packed, w.scales, w.zeros, 32, 64))
