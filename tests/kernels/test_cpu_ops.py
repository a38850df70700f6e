"""The compiled CPU ops (torch.ops.icml25.*) against the pure-PyTorch references."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from methods.kernels import reference as R

from .test_reference import BETAS, random_24

SRC = Path(__file__).resolve().parents[2] / "src"

OPS = lambda: torch.ops.icml25  # noqa: E731


def close(a, b, rel=1e-4):
    tol = rel * (1 + b.abs().max().item())
    assert a.shape == b.shape and a.dtype == b.dtype
    assert (a - b).abs().max().item() <= tol, (a - b).abs().max().item()


@pytest.mark.parametrize("m", [1, 3, 8, 13, 32])
@pytest.mark.parametrize(
    "n,k,gs", [(7, 64, 32), (33, 100, 64), (16, 257, 128), (5, 31, 8), (9, 70, 7), (4, 1, 16), (12, 300, 96)]
)
@pytest.mark.parametrize("symmetric", [True, False])
def test_int4_linear(ext, m, n, k, gs, symmetric):
    g = torch.Generator().manual_seed(m * 1000 + k)
    w = ext.quantize_int4_rtn(torch.randn(n, k, generator=g), gs, symmetric)
    x = torch.randn(m, k, generator=g)
    want = R.int4_linear(x, w.packed, w.scales, w.zeros, gs, k)
    close(OPS().int4_linear(x, w.packed, w.scales, w.zeros, gs, k), want)
    close(ext.int4_linear(x[None], w), want[None])


def test_int4_extremes_and_zeros(ext):
    g = torch.Generator().manual_seed(1)  # seeded: a tolerance check on random data must not vary between runs
    w = ext.quantize_int4_rtn(torch.randn(8, 128, generator=g) * 1e6, 32, False)
    for x in (torch.zeros(2, 128), torch.full((2, 128), 1e4), torch.randn(2, 128, generator=g)):
        close(ext.int4_linear(x, w), R.int4_linear(x, w.packed, w.scales, w.zeros, 32, 128))
    z = ext.quantize_int4_rtn(torch.zeros(8, 128), 32, True)
    assert torch.equal(ext.int4_linear(torch.randn(3, 128, generator=g), z), torch.zeros(3, 8))
    q = torch.full((4, 64), -8)  # the extreme code everywhere
    w = ext.pack_int4(q, torch.ones(4, 2), None, 32)
    assert torch.equal(ext.int4_linear(torch.ones(1, 64), w), torch.full((1, 4), -512.0))


@pytest.mark.parametrize("m", [1, 4, 8, 11, 32])
@pytest.mark.parametrize(
    "n,k,gs", [(7, 64, 32), (33, 96, 32), (16, 300, 128), (5, 30, 8), (9, 130, 64), (3, 4, 4), (6, 256, 12)]
)
@pytest.mark.parametrize("rank", [0, 3])
def test_sparse24_linear(ext, m, n, k, gs, rank):
    g = torch.Generator().manual_seed(m * 100 + k + rank)
    q = random_24(n, k, seed=k + m)
    s = torch.rand(n, -(-k // gs), generator=g) + 0.1
    w = ext.pack_sparse24_int4(q, s, gs)
    x = torch.randn(m, k, generator=g)
    lo = (torch.randn(n, rank, generator=g), torch.randn(rank, k, generator=g)) if rank else (None, None)
    want = R.sparse24_int4_linear(x, w.values, w.meta, w.scales, gs, k, *lo)
    close(OPS().sparse24_int4_linear(x, w.values, w.meta, w.scales, gs, k, *lo), want)
    close(ext.sparse24_int4_linear(x, w, *lo), want)


def test_sparse24_sparser_than_24_and_extremes(ext):
    q = random_24(6, 128, seed=5)
    q[:, ::3] = 0  # groups with fewer than 2 kept entries (filler slots)
    q[0] = 0
    q[1, :4] = torch.tensor([-8, 0, 7, 0])
    g = torch.Generator().manual_seed(2)
    s = torch.rand(6, 4, generator=g) * 1e5
    w = ext.pack_sparse24_int4(q, s, 32)
    for x in (torch.randn(3, 128, generator=g), torch.zeros(3, 128), torch.full((3, 128), -1e3)):
        close(ext.sparse24_int4_linear(x, w), R.sparse24_int4_linear(x, w.values, w.meta, w.scales, 32, 128))


@pytest.mark.parametrize("scale", [0.01, 0.5, 1.0, 3.0, 100.0, 1e5])
def test_e8_nearest_bit_exact(ext, scale):
    x = torch.randn(1001, 8, generator=torch.Generator().manual_seed(int(scale * 10))) * scale
    assert torch.equal(OPS().e8_nearest(x), R.e8_nearest(x))


def test_e8_nearest_ties_and_zeros(ext):
    g = torch.Generator().manual_seed(0)
    for x in (
        torch.randint(-6, 7, (777, 8), generator=g) / 2,
        torch.randint(-6, 7, (777, 8), generator=g) / 4,
        torch.zeros(5, 8),
    ):
        assert torch.equal(ext.e8_nearest(x), R.e8_nearest(x))
    assert ext.e8_nearest(torch.zeros(0, 8)).shape == (0, 8)


@pytest.mark.parametrize("q", [2, 7, 14, 16, 255])
@pytest.mark.parametrize("dist", ["gauss", "heavy", "zeros", "large"])
def test_nestquant_encode_decode_bit_exact(ext, q, dist):
    g = torch.Generator().manual_seed(q)
    x = {
        "gauss": torch.randn(517, 8, generator=g),
        "heavy": torch.distributions.StudentT(2.0).sample((517, 8)),
        "zeros": torch.zeros(17, 8),
        "large": torch.randn(517, 8, generator=g) * 1e4,
    }[dist]
    betas = BETAS * 14 / q
    c, i = OPS().nestquant_encode(x, q, betas)
    rc, ri = R.nestquant_encode(x, q, betas)
    assert torch.equal(c, rc) and torch.equal(i, ri)
    assert torch.equal(OPS().nestquant_decode(c, i, q, betas), R.nestquant_decode(rc, ri, q, betas))


@pytest.mark.parametrize("m,n,k", [(1, 5, 8), (3, 17, 40), (8, 33, 136), (32, 4, 264)])
def test_nestquant_matmul(ext, m, n, k):
    g = torch.Generator().manual_seed(n)
    c, i = ext.nestquant_encode(torch.randn(n, k // 8, 8, generator=g), 14, BETAS)
    x = torch.randn(m, k, generator=g)
    close(ext.nestquant_matmul(x, c, i, 14, BETAS, (n, k)), R.nestquant_matmul(x, c, i, 14, BETAS, (n, k)))


@pytest.mark.parametrize(
    "t,sink,window", [(1, 0, 0), (5, 2, 2), (100, 4, 16), (1000, 32, 64), (300, 0, 10), (300, 10, 0), (64, 40, 40)]
)
def test_attention(ext, t, sink, window):
    g = torch.Generator().manual_seed(t)
    q, k, v = (
        torch.randn(2, 3, 24, generator=g),
        torch.randn(2, 3, t, 24, generator=g),
        torch.randn(2, 3, t, 24, generator=g),
    )
    k[0, 0] *= 30  # peaked softmax
    sc = 24**-0.5
    if sink + window > 0:
        close(OPS().decode_attention(q, k, v, sink, window, sc), R.decode_attention(q, k, v, sink, window, sc))
    for lam in (0.0, 0.1, 0.5, 1e9):
        o, os_, acc = OPS().spec_decode_attention(q, k, v, sink, window, lam, sc)
        ro, ros, racc = R.spec_decode_attention(q, k, v, sink, window, lam, sc)
        close(o, ro)
        close(os_, ros)
        ratio = (ro - ros).norm(dim=-1) / ro.norm(dim=-1)
        sure = (ratio - lam).abs() > 1e-4
        assert torch.equal(acc[sure], racc[sure])


def test_threads_do_not_change_results(ext):
    w = ext.quantize_int4_rtn(torch.randn(64, 256), 64)
    x = torch.randn(8, 256)
    n = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = ext.int4_linear(x, w)
    finally:
        torch.set_num_threads(n)
    assert torch.equal(one, ext.int4_linear(x, w))


def test_bad_input_is_rejected(ext):
    w = ext.quantize_int4_rtn(torch.randn(8, 64), 32)
    with pytest.raises(RuntimeError, match="x: expected dtype"):
        OPS().int4_linear(torch.randn(2, 64, dtype=torch.float64), w.packed, w.scales, w.zeros, 32, 64)
    with pytest.raises(RuntimeError, match="contiguous"):
        OPS().int4_linear(torch.randn(64, 2).T, w.packed, w.scales, w.zeros, 32, 64)
    with pytest.raises(RuntimeError, match="scales: expected shape"):
        OPS().int4_linear(torch.randn(2, 64), w.packed, w.scales[:, :1].contiguous(), w.zeros, 32, 64)
    with pytest.raises(RuntimeError, match="x: expected K"):
        OPS().int4_linear(torch.randn(2, 63), w.packed, w.scales, w.zeros, 32, 64)
    with pytest.raises(RuntimeError, match="codes: expected"):
        OPS().nestquant_decode(torch.zeros(3, 7, dtype=torch.uint8), torch.zeros(3, dtype=torch.uint8), 14, BETAS)
    with pytest.raises(RuntimeError, match="k: expected"):
        OPS().decode_attention(torch.randn(1, 2, 8), torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4), 1, 1, 1.0)
    with pytest.raises(ValueError, match="x: last dim"):
        ext.int4_linear(torch.randn(2, 63), w)
    # the public wrapper makes non-contiguous input contiguous
    x = torch.randn(64, 2).T
    assert torch.equal(ext.int4_linear(x, w), ext.int4_linear(x.contiguous(), w))


def test_opcheck_schemas_and_fake_kernels(ext):
    """torch.library.opcheck: schema, fake (meta) kernel and dispatch consistency of every op."""
    w = ext.quantize_int4_rtn(torch.randn(8, 64), 32)
    s = ext.pack_sparse24_int4(random_24(8, 64), torch.rand(8, 2), 32)
    x, v8 = torch.randn(3, 64), torch.randn(5, 8)
    c, i = R.nestquant_encode(torch.randn(8, 8, 8), 14, BETAS)
    q, k = torch.randn(1, 2, 16), torch.randn(1, 2, 20, 16)
    cases = [
        (OPS().int4_linear, (x, w.packed, w.scales, w.zeros, 32, 64)),
        (OPS().sparse24_int4_linear, (x, s.values, s.meta, s.scales, 32, 64, torch.randn(8, 2), torch.randn(2, 64))),
        (OPS().e8_nearest, (v8,)),
        (OPS().nestquant_encode, (v8, 14, BETAS)),
        (OPS().nestquant_decode, (c.reshape(-1, 8), i.reshape(-1), 14, BETAS)),
        (OPS().nestquant_matmul, (x, c, i, 14, BETAS, 8, 64)),
        (OPS().decode_attention, (q, k, k.clone(), 2, 4, 0.25)),
        (OPS().spec_decode_attention, (q, k, k.clone(), 2, 4, 0.1, 0.25)),
    ]
    for op, args in cases:
        torch.library.opcheck(op, args, test_utils=("test_schema", "test_faketensor"))


def test_fake_kernels_registered_when_the_library_was_loaded_first(ext):
    """A build in the same process loads the library before methods.kernels does (the ext fixture after a source
    change): _load must still register the fake kernels, or torch.compile and opcheck fail on the ops."""
    code = (
        "import os, torch\n"
        "os.environ['ICML25_KERNELS'] = 'reference'\n"
        "import methods.kernels as K\n"
        "assert not K.extension_available()\n"
        "del os.environ['ICML25_KERNELS']\n"
        "from methods.kernels.paths import library_path\n"
        "torch.ops.load_library(str(library_path()))\n"
        "assert K._load() and K.extension_available()\n"
        "w = K.quantize_int4_rtn(torch.randn(8, 64), 32)\n"
        "torch.library.opcheck(torch.ops.icml25.int4_linear.default, (torch.randn(3, 64), w.packed, w.scales, w.zeros, 32, 64),\n"
        "                      test_utils=('test_faketensor',))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])},
    )
    assert r.returncode == 0, r.stderr[-2000:]


def test_beta_index_out_of_range_is_rejected(ext):
    c, i = R.nestquant_encode(torch.randn(4, 8), 14, BETAS)
    with pytest.raises(RuntimeError, match="beta_idx: index 7 out of range"):
        OPS().nestquant_decode(c, torch.full_like(i, 7), 14, BETAS)
    with pytest.raises(RuntimeError, match="beta_idx: index 9 out of range"):
        OPS().nestquant_matmul(torch.randn(1, 32), c[None], torch.full((1, 4), 9, dtype=torch.uint8), 14, BETAS, 1, 32)


def test_build_is_cached_and_stable(ext):
    """A second build reuses the library, and building does not change the source hash (folder name)."""
    from methods.kernels.build import build
    from methods.kernels.paths import library_path, source_hash

    before = source_hash()
    assert build() == library_path() and library_path().exists()
    assert source_hash() == before
