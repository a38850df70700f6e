"""The AMX-INT8 path of int4_linear and sparse24_int4_linear (csrc/cpu/amx.h) against the PyTorch reference, and
its dispatch.

The kernel runs on two backends of one tile interface: the real AMX instructions (only where the CPU has AMX-TILE
and AMX-INT8) and a scalar emulation of the same instructions (ICML25_CPU_AMX=emulate, every batch), so that its
layout and blocking are tested on any CPU with AVX-512. Shapes are awkward for 16 x 16 tiles: batches and weight rows
not multiples of 16, a partial last scale group, group sizes 64-4096; 2:4 also with slots in decreasing positions
and the low-rank term."""

import pytest
import torch

from methods.kernels import reference as R

from .test_cpu_dispatch import close, quantized_act, swap_some_slots
from .test_reference import random_24

OPS = lambda: torch.ops.icml25  # noqa: E731
SHAPES = [(13, 300, 64), (33, 640, 128), (7, 1000, 256), (17, 8400, 128), (16, 4096, 4096)]
BATCHES = [1, 3, 8, 16, 17, 33, 40]


def avx512():
    return "avx512f" in open("/proc/cpuinfo").read()


@pytest.fixture
def clean(ext, monkeypatch):
    monkeypatch.setenv("ICML25_CPU_TUNING", "off")
    monkeypatch.delenv("ICML25_CPU_AMX", raising=False)
    OPS().clear_cpu_plans()
    yield
    OPS().clear_cpu_plans()


def check(ext, n, k, gs, m, symmetric, seed=0):
    g = torch.Generator().manual_seed(seed + m * 31 + k)
    w = ext.quantize_int4_rtn(torch.randn(n, k, generator=g), gs, symmetric)
    x = torch.randn(m, k, generator=g)
    got = OPS().int4_linear(x, w.packed, w.scales, w.zeros, gs, k)
    close(got, R.int4_linear(x, w.packed, w.scales, w.zeros, gs, k))
    xq, _ = quantized_act(x, k, gs)  # the same int16 activations as the VNNI paths: the identity holds to 1e-5
    close(got, R.int4_linear(xq, w.packed, w.scales, w.zeros, gs, k), rel=1e-5)
    return got


def check24(ext, n, k, gs, m, seed=0, swap=False):
    g = torch.Generator().manual_seed(seed + m * 17 + k)
    q = random_24(n, k, seed=seed + k + m)
    q[:, ::5] = 0  # some groups with fewer than 2 kept entries
    w = ext.pack_sparse24_int4(q, torch.rand(n, -(-k // gs), generator=g) + 0.1, gs)
    v, meta = w.values, w.meta
    if swap:  # some slots with decreasing positions (the same matrix)
        v, meta, _ = swap_some_slots(w, 0.05, seed=m)
    x = torch.randn(m, k, generator=g)
    got = OPS().sparse24_int4_linear(x, v, meta, w.scales, gs, k)
    close(got, R.sparse24_int4_linear(x, w.values, w.meta, w.scales, gs, k))
    xq, _ = quantized_act(x, k, gs)
    close(got, R.sparse24_int4_linear(xq, w.values, w.meta, w.scales, gs, k), rel=1e-5)
    return got


@pytest.mark.parametrize("m", BATCHES)
@pytest.mark.parametrize("n,k,gs", SHAPES)
def test_emulated_amx_sparse24_matches_reference(clean, ext, monkeypatch, n, k, gs, m):
    if not avx512():
        pytest.skip("the AMX kernel is compiled where the compiler targets AVX-512 only")
    monkeypatch.setenv("ICML25_CPU_AMX", "emulate")
    check24(ext, n, k, gs, m, swap=m in (3, 17))


def test_emulated_amx_sparse24_with_lowrank(clean, ext, monkeypatch):
    if not avx512():
        pytest.skip("the AMX kernel is compiled where the compiler targets AVX-512 only")
    monkeypatch.setenv("ICML25_CPU_AMX", "emulate")
    n, k, gs, m, r = 21, 384, 128, 9, 3
    w = ext.pack_sparse24_int4(random_24(n, k, seed=4), torch.rand(n, k // gs) + 0.1, gs)
    x, L, Rr = torch.randn(m, k), torch.randn(n, r), torch.randn(r, k)
    got = ext.sparse24_int4_linear(x, w, L, Rr)
    close(got, R.sparse24_int4_linear(x, w.values, w.meta, w.scales, gs, k, L, Rr))


@pytest.mark.parametrize("m", BATCHES)
@pytest.mark.parametrize("n,k,gs", SHAPES)
@pytest.mark.parametrize("symmetric", [True, False])
def test_emulated_amx_matches_reference(clean, ext, monkeypatch, n, k, gs, m, symmetric):
    if not avx512():
        pytest.skip("the AMX kernel is compiled where the compiler targets AVX-512 only")
    monkeypatch.setenv("ICML25_CPU_AMX", "emulate")
    assert OPS().cpu_amx_enabled()
    check(ext, n, k, gs, m, symmetric)


def test_real_amx_matches_reference(clean, ext):
    if not OPS().cpu_amx_enabled(True):
        pytest.skip("CPU lacks amx_int8 (or the kernel did not grant the AMX tile state)")
    OPS().set_cpu_plan("int4", 0, 0, 0, 1, 64, "amx", 0)  # every batch through the real tiles
    OPS().set_cpu_plan("sparse24", 0, 0, 0, 1, 64, "amx", 0)
    for n, k, gs in SHAPES:
        for m in BATCHES:
            check(ext, n, k, gs, m, False)
            check24(ext, n, k, gs, m, swap=m == 17)


def test_amx_forced_off_falls_back(clean, ext, monkeypatch):
    """ICML25_CPU_AMX=0: no AMX path (real or emulated), the VNNI / fp32 paths give the reference's result; a plan
    that asks for AMX then takes the default path. The emulated path agrees with it to the activations' identity."""
    n, k, gs = 33, 640, 128
    monkeypatch.setenv("ICML25_CPU_AMX", "0")
    assert not OPS().cpu_amx_enabled() and not OPS().cpu_amx_enabled(True)
    OPS().set_cpu_plan("int4", 0, 0, 0, 1, 64, "amx", 0)
    OPS().set_cpu_plan("sparse24", 0, 0, 0, 1, 64, "amx", 0)
    off, off24 = check(ext, n, k, gs, 17, False), check24(ext, n, k, gs, 17)
    OPS().clear_cpu_plans()
    assert torch.equal(off, check(ext, n, k, gs, 17, False))  # the same as no plan at all
    assert torch.equal(off24, check24(ext, n, k, gs, 17))
    if avx512():
        monkeypatch.setenv("ICML25_CPU_AMX", "emulate")
        close(check(ext, n, k, gs, 17, False), off, rel=1e-5)
        close(check24(ext, n, k, gs, 17), off24, rel=1e-5)


def test_amx_plan_takes_no_nr(clean):
    with pytest.raises(RuntimeError, match="nr"):
        OPS().set_cpu_plan("sparse24", 0, 0, 0, 1, 8, "amx", 2)
    with pytest.raises(RuntimeError, match="nr"):
        OPS().set_cpu_plan("int4", 0, 0, 0, 1, 8, "amx", 4)
