"""Compiled kernels for the quantization / sparsity / attention papers (slim, nestquant, alspec).

Every op has a pure-PyTorch reference (``methods.kernels.reference``, the test oracle; its docstring
documents the packed formats) and a compiled op ``torch.ops.icml25.<op>`` (C++ in csrc/cpu, CUDA in
csrc/cuda). The functions below call the compiled op when the extension is built
(``python -m methods.kernels.build``; ``make test`` and the Snakemake rule ``kernels_build`` do it) and
fall back to the reference, with a one-line warning, when it is not. ``ICML25_KERNELS=reference`` in the
environment forces the reference.

CPU paths: where the CPU has AVX-512 VNNI (and VBMI for 2:4), ``int4_linear`` and ``sparse24_int4_linear``
with a group size that is a multiple of 64 quantize the activations per (row, group) to int16 and use
int16 dot products (csrc/cpu/vnni.h; error <= half an activation step, 1.5e-5 of the group's largest
|x|); ``ICML25_CPU_VNNI=0`` in the environment forces the fp32 paths. ``cpu_vnni_enabled(sparse24)`` says
which path the next call takes. Which VNNI path and tiling a batch takes is measured on the running CPU on first
use of each shape and batch bucket, and cached on disk (``methods.kernels.tuning``; ``ICML25_CPU_TUNING=off``
keeps the built-in choice). Where the CPU has AMX-INT8, int4 and 2:4 batches from 8 rows take AMX tiles on the same int16
activations split into bytes (csrc/cpu/amx.h, exact integer sums; ``ICML25_CPU_AMX=0`` switches it off,
``cpu_amx_enabled()`` says whether it may run).

Ops
- int4 weight-only: ``pack_int4`` / ``quantize_int4_rtn`` -> ``Int4Weight``; ``int4_linear(x, w)``.
- 2:4 sparse + int4 (SLiM's format): ``pack_sparse24_int4`` -> ``Sparse24Int4Weight``;
  ``sparse24_int4_linear(x, w, lora_l, lora_r)`` = x Wᵀ + (x Rᵀ) Lᵀ.
- E8 / NestQuant: ``e8_nearest``, ``nestquant_encode``, ``nestquant_decode``, ``nestquant_matmul``.
- Attention at decode: ``decode_attention`` (sink + window keys, or all), ``spec_decode_attention``
  (exact, speculative and the verification ‖o − ô‖ < λ‖o‖ in one op; ALSpec).
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass

import torch

from . import reference, tuning
from .paths import library_path

_LOADED = False
_WARNED = False


def _load() -> bool:
    global _LOADED
    if os.environ.get("ICML25_KERNELS", "") == "reference":
        return False
    if not (hasattr(torch.ops, "icml25") and hasattr(torch.ops.icml25, "int4_linear")):
        path = library_path()
        if not path.exists():
            return _LOADED
        torch.ops.load_library(str(path))
    # also when the library came in another way (methods.kernels.build loads what it compiles)
    _register_fakes()
    _LOADED = True
    return True


_FAKES = False


def _register_fakes() -> None:
    """Shape-only (fake / meta) kernels of the compiled ops, so they trace under torch.compile (once)."""
    global _FAKES
    if _FAKES:
        return
    _FAKES = True
    lib = "icml25::"

    def fake(name):
        return torch.library.register_fake(lib + name)

    @fake("int4_linear")
    def _(x, packed, scales, zeros, group_size, k):
        return x.new_empty(x.shape[0], packed.shape[0])

    @fake("sparse24_int4_linear")
    def _(x, values, meta, scales, group_size, k, lora_l=None, lora_r=None):
        return x.new_empty(x.shape[0], values.shape[0])

    @fake("e8_nearest")
    def _(x):
        return torch.empty_like(x)

    @fake("nestquant_encode")
    def _(x, q, betas):
        return x.new_empty(x.shape, dtype=torch.uint8), x.new_empty(x.shape[:-1], dtype=torch.uint8)

    @fake("nestquant_decode")
    def _(codes, beta_idx, q, betas):
        return codes.new_empty(codes.shape, dtype=torch.float32)

    @fake("nestquant_matmul")
    def _(x, codes, beta_idx, q, betas, n, k):
        return x.new_empty(x.shape[0], n)

    @fake("decode_attention")
    def _(q, k, v, sink, window, scale):
        return torch.empty_like(q)

    @fake("spec_decode_attention")
    def _(q, k, v, sink, window, lam, scale):
        return torch.empty_like(q), torch.empty_like(q), q.new_empty(q.shape[:2], dtype=torch.bool)


def cpu_vnni_enabled(sparse24: bool = False) -> bool:
    """Whether the next CPU int4 (sparse24=False) or 2:4+int4 call takes the AVX-512 VNNI path (see the module doc)."""
    return _LOADED and bool(torch.ops.icml25.cpu_vnni_enabled(sparse24))


def cpu_amx_enabled(hardware: bool = False) -> bool:
    """Whether CPU int4 / 2:4 batches may take the AMX path (csrc/cpu/amx.h): hardware=True asks for the real AMX-INT8
    instructions (CPUID and the kernel's grant of the tile state), False also counts the emulated backend
    (``ICML25_CPU_AMX=emulate``, for tests); ``ICML25_CPU_AMX=0`` switches both off."""
    return _LOADED and bool(torch.ops.icml25.cpu_amx_enabled(hardware))


def extension_available() -> bool:
    """True when torch.ops.icml25.* are registered (the compiled library is built and loaded)."""
    return _LOADED


def _use_ext(*tensors: torch.Tensor) -> bool:
    global _WARNED
    if not _LOADED:
        if not _WARNED:
            warnings.warn(
                "methods.kernels: compiled extension not built; using the pure-PyTorch reference "
                "(run `python -m methods.kernels.build`)",
                stacklevel=3,
            )
            _WARNED = True
        return False
    dev = tensors[0].device.type
    if dev == "cuda" and not torch._C._dispatch_has_kernel_for_dispatch_key("icml25::int4_linear", "CUDA"):
        return False
    return dev in ("cpu", "cuda")


def _tuned(op: str, call, x2: torch.Tensor, n: int, k: int, group_size: int) -> None:
    """On a CPU VNNI call, set the tuned plan of its shape and batch first (``methods.kernels.tuning``)."""
    if torch.compiler.is_compiling():
        return  # traced: no timing inside a graph (plans set by eager calls still apply)
    if x2.shape[0] == 1 and tuning.settled():
        return  # batch 1 is never tuned (and a plan file is loaded already): skip the checks below (~3 µs a call)
    if (
        x2.device.type != "cpu"
        or x2.shape[0] == 0
        or n == 0
        or group_size % 64
        or k < group_size
        or not torch.ops.icml25.cpu_vnni_enabled(op == "sparse24")
    ):
        return
    tuning.plan_for(op, call, n, k, group_size, x2.shape[0])


def _f32(t: torch.Tensor) -> torch.Tensor:
    return t.to(torch.float32).contiguous()


def _groups(k: int, group_size: int) -> int:
    if group_size <= 0:
        raise ValueError(f"group_size must be positive, got {group_size}")
    return -(-k // group_size)


# ----------------------------------------------------------------------------- int4 weight-only


@dataclass
class Int4Weight:
    """int4 weight-only matrix W [N, K]: packed nibbles, per-group scales and zero points (see reference)."""

    packed: torch.Tensor  # uint8 [N, ceil(K/2)]
    scales: torch.Tensor  # float32 [N, G]
    zeros: torch.Tensor  # float32 [N, G]
    group_size: int
    shape: tuple[int, int]

    def dequantize(self) -> torch.Tensor:
        return reference.dequantize_int4(self.packed, self.scales, self.zeros, self.group_size, self.shape[1])

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.packed, self.scales, self.zeros))


def pack_int4(
    qint: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor | None = None, group_size: int = 128
) -> Int4Weight:
    """Pack caller-quantized integers qint [N, K]: W = scales * qint (zeros None, qint in [-8, 7]) or
    W = scales * (qint - zeros) (qint in [0, 15]); scales / zeros [N, ceil(K / group_size)]."""
    if qint.dim() != 2 or qint.is_floating_point():
        raise ValueError(f"qint: expected an integer tensor [N, K], got {qint.dtype} {tuple(qint.shape)}")
    n, k = qint.shape
    g = _groups(k, group_size)
    if tuple(scales.shape) != (n, g):
        raise ValueError(
            f"scales: expected shape {(n, g)} for qint {(n, k)} and group_size {group_size}, got {tuple(scales.shape)}"
        )
    lo, hi = (-8, 7) if zeros is None else (0, 15)
    if qint.numel() and (int(qint.min()) < lo or int(qint.max()) > hi):
        raise ValueError(
            f"qint: values must lie in [{lo}, {hi}] ({'symmetric' if zeros is None else 'with zero points'})"
        )
    if zeros is not None and tuple(zeros.shape) != (n, g):
        raise ValueError(f"zeros: expected shape {(n, g)}, got {tuple(zeros.shape)}")
    packed, s, z = reference.pack_int4(qint, scales, zeros, group_size)
    return Int4Weight(packed, s, z, group_size, (n, k))


def quantize_int4_rtn(w: torch.Tensor, group_size: int = 128, symmetric: bool = True) -> Int4Weight:
    """Round-to-nearest int4 with per-group absmax (symmetric, q in [-8, 7], scale = max|w| / 7) or
    min-max (asymmetric, q in [0, 15], integer zero point) scales."""
    if w.dim() != 2:
        raise ValueError(f"w: expected [N, K], got {tuple(w.shape)}")
    n, k = w.shape
    g = _groups(k, group_size)
    wp = torch.nn.functional.pad(w.to(torch.float32), (0, g * group_size - k)).reshape(n, g, group_size)
    valid = torch.nn.functional.pad(torch.ones(k, dtype=torch.bool), (0, g * group_size - k)).reshape(g, group_size)
    if symmetric:
        s = wp.abs().amax(-1) / 7
        s = torch.where(s > 0, s, torch.ones_like(s))
        q = torch.clamp(torch.round(wp / s[..., None]), -8, 7)
        return pack_int4(q.reshape(n, -1)[:, :k].to(torch.int64), s, None, group_size)
    big = torch.finfo(torch.float32).max
    mx = torch.where(valid, wp, -big).amax(-1)
    mn = torch.where(valid, wp, big).amin(-1)
    mx, mn = torch.maximum(mx, torch.zeros_like(mx)), torch.minimum(mn, torch.zeros_like(mn))
    s = (mx - mn) / 15
    s = torch.where(s > 0, s, torch.ones_like(s))
    z = torch.clamp(torch.round(-mn / s), 0, 15)
    q = torch.clamp(torch.round(wp / s[..., None]) + z[..., None], 0, 15)
    return pack_int4(q.reshape(n, -1)[:, :k].to(torch.int64), s, z, group_size)


def _as_2d(x: torch.Tensor, k: int, name: str = "x") -> torch.Tensor:
    if x.shape[-1] != k:
        raise ValueError(f"{name}: last dim must be K = {k}, got shape {tuple(x.shape)}")
    return _f32(x.reshape(-1, k))


def int4_linear(x: torch.Tensor, w: Int4Weight) -> torch.Tensor:
    """x [..., K] @ Wᵀ -> [..., N] (float32)."""
    n, k = w.shape
    x2 = _as_2d(x, k)
    if _use_ext(x2):

        def call():
            return torch.ops.icml25.int4_linear(x2, w.packed, w.scales, w.zeros, w.group_size, k)

        _tuned("int4", call, x2, n, k, w.group_size)
        y = call()
    else:
        y = reference.int4_linear(x2, w.packed, w.scales, w.zeros, w.group_size, k)
    return y.reshape(*x.shape[:-1], n)


# ----------------------------------------------------------------------------- 2:4 sparse + int4


@dataclass
class Sparse24Int4Weight:
    """2:4 sparse symmetric int4 matrix W [N, K]: kept values (2 nibbles per group of 4), 2-bit positions, scales."""

    values: torch.Tensor  # uint8 [N, ceil(K/4)]
    meta: torch.Tensor  # uint8 [N, ceil(K/8)]
    scales: torch.Tensor  # float32 [N, G]
    group_size: int
    shape: tuple[int, int]

    def dequantize(self) -> torch.Tensor:
        return reference.dequantize_sparse24_int4(self.values, self.meta, self.scales, self.group_size, self.shape[1])

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.values, self.meta, self.scales))


def pack_sparse24_int4(
    qint: torch.Tensor, scales: torch.Tensor, group_size: int = 128, mask: torch.Tensor | None = None
) -> Sparse24Int4Weight:
    """Pack qint [N, K] (integers in [-8, 7], W = scales * qint, at most 2 kept entries per aligned group
    of 4 along K; kept = ``mask`` or qint != 0). The format is symmetric: a pruned entry is exactly 0."""
    if qint.dim() != 2 or qint.is_floating_point():
        raise ValueError(f"qint: expected an integer tensor [N, K], got {qint.dtype} {tuple(qint.shape)}")
    n, k = qint.shape
    g = _groups(k, group_size)
    if tuple(scales.shape) != (n, g):
        raise ValueError(
            f"scales: expected shape {(n, g)} for qint {(n, k)} and group_size {group_size}, got {tuple(scales.shape)}"
        )
    if qint.numel() and (int(qint.min()) < -8 or int(qint.max()) > 7):
        raise ValueError("qint: values must lie in [-8, 7] (symmetric int4)")
    if mask is not None and tuple(mask.shape) != (n, k):
        raise ValueError(f"mask: expected shape {(n, k)}, got {tuple(mask.shape)}")
    values, meta, s = reference.pack_sparse24_int4(qint, scales, group_size, mask)
    return Sparse24Int4Weight(values, meta, s, group_size, (n, k))


def sparse24_int4_linear(
    x: torch.Tensor, w: Sparse24Int4Weight, lora_l: torch.Tensor | None = None, lora_r: torch.Tensor | None = None
) -> torch.Tensor:
    """x Wᵀ + (x Rᵀ) Lᵀ -> [..., N]; L [N, r], R [r, K] (both or neither)."""
    n, k = w.shape
    if (lora_l is None) != (lora_r is None):
        raise ValueError("lora_l and lora_r: pass both (L [N, r], R [r, K]) or neither")
    if lora_l is not None:
        r = lora_l.shape[-1]
        if tuple(lora_l.shape) != (n, r) or tuple(lora_r.shape) != (r, k):
            raise ValueError(
                f"lora_l/lora_r: expected [N, r] = [{n}, r] and [r, K] = [r, {k}], got {tuple(lora_l.shape)} and {tuple(lora_r.shape)}"
            )
        lora_l, lora_r = _f32(lora_l), _f32(lora_r)
    x2 = _as_2d(x, k)
    if _use_ext(x2):
        _tuned(
            "sparse24",
            lambda: torch.ops.icml25.sparse24_int4_linear(x2, w.values, w.meta, w.scales, w.group_size, k),
            x2,
            n,
            k,
            w.group_size,
        )
        y = torch.ops.icml25.sparse24_int4_linear(x2, w.values, w.meta, w.scales, w.group_size, k, lora_l, lora_r)
    else:
        y = reference.sparse24_int4_linear(x2, w.values, w.meta, w.scales, w.group_size, k, lora_l, lora_r)
    return y.reshape(*x.shape[:-1], n)


# ----------------------------------------------------------------------------- E8 / NestQuant


def _check8(x: torch.Tensor, name: str) -> None:
    if x.dim() == 0 or x.shape[-1] != 8:
        raise ValueError(f"{name}: last dim must be 8 (E8 blocks), got shape {tuple(x.shape)}")


def _check_q_betas(q: int, betas: torch.Tensor) -> torch.Tensor:
    if not 2 <= int(q) <= 256:
        raise ValueError(f"q: nesting ratio must be in [2, 256] (codes are uint8), got {q}")
    if betas.dim() != 1 or not 1 <= betas.numel() <= 256 or bool((betas <= 0).any()):
        raise ValueError(f"betas: expected a 1-D tensor of 1..256 positive scales, got {tuple(betas.shape)}")
    return _f32(betas)


def e8_nearest(x: torch.Tensor) -> torch.Tensor:
    """Nearest E8 point of every 8-vector of x [..., 8] (Conway & Sloane)."""
    _check8(x, "x")
    xf = _f32(x)
    if _use_ext(xf):
        return torch.ops.icml25.e8_nearest(xf.reshape(-1, 8)).reshape(x.shape)
    return reference.e8_nearest(xf)


def nestquant_encode(x: torch.Tensor, q: int, betas: torch.Tensor):
    """(codes uint8 [..., 8], beta_idx uint8 [...]): Voronoi code mod qE8 of x/β for the β of least error."""
    _check8(x, "x")
    betas = _check_q_betas(q, betas)
    xf = _f32(x)
    if _use_ext(xf):
        c, i = torch.ops.icml25.nestquant_encode(xf.reshape(-1, 8), int(q), betas)
        return c.reshape(x.shape), i.reshape(x.shape[:-1])
    return reference.nestquant_encode(xf, int(q), betas)


def nestquant_decode(codes: torch.Tensor, beta_idx: torch.Tensor, q: int, betas: torch.Tensor) -> torch.Tensor:
    """x̂ = β (y − q Q_E8(y/q)), y = codes G, per 8-vector; -> float32 [..., 8]."""
    _check8(codes, "codes")
    betas = _check_q_betas(q, betas)
    if tuple(beta_idx.shape) != tuple(codes.shape[:-1]):
        raise ValueError(f"beta_idx: expected shape {tuple(codes.shape[:-1])}, got {tuple(beta_idx.shape)}")
    c = codes.to(torch.uint8).contiguous()
    b = beta_idx.to(torch.uint8).contiguous()
    if _use_ext(c):
        return (
            torch.ops.icml25.nestquant_decode(c.reshape(-1, 8), b.reshape(-1), int(q), betas)
            .reshape(codes.shape)
            .to(torch.float32)
        )
    return reference.nestquant_decode(c, b, int(q), betas)


def nestquant_matmul(
    x: torch.Tensor, codes: torch.Tensor, beta_idx: torch.Tensor, q: int, betas: torch.Tensor, shape: tuple[int, int]
) -> torch.Tensor:
    """x [..., K] @ Wᵀ with W [N, K] NestQuant-coded (codes [N, K/8, 8], beta_idx [N, K/8]), decoded on the fly."""
    n, k = shape
    if k % 8:
        raise ValueError(f"shape: K = {k} must be a multiple of 8 for E8 blocks")
    betas = _check_q_betas(q, betas)
    if codes.numel() != n * k or beta_idx.numel() != n * k // 8:
        raise ValueError(f"codes/beta_idx: expected {n * k} codes and {n * k // 8} beta indices for shape {shape}")
    c = codes.to(torch.uint8).contiguous().reshape(n, k // 8, 8)
    b = beta_idx.to(torch.uint8).contiguous().reshape(n, k // 8)
    x2 = _as_2d(x, k)
    if _use_ext(x2):
        y = torch.ops.icml25.nestquant_matmul(x2, c, b, int(q), betas, n, k)
    else:
        y = reference.nestquant_matmul(x2, c, b, int(q), betas, (n, k))
    return y.reshape(*x.shape[:-1], n)


# ----------------------------------------------------------------------------- attention at decode


def _check_attn(q, k, v, sink, window):
    if q.dim() != 3 or k.dim() != 4 or k.shape != v.shape or k.shape[:2] != q.shape[:2] or k.shape[-1] != q.shape[-1]:
        raise ValueError(
            f"q/k/v: expected q [B, H, D], k and v [B, H, T, D], got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )
    if sink < 0 or window < 0:
        raise ValueError(f"sink/window: must be >= 0, got {sink}, {window}")


def decode_attention(q, k, v, sink: int, window: int, scale: float | None = None) -> torch.Tensor:
    """Softmax attention of q [B, H, D] over keys [0, sink) ∪ [T − window, T) (all keys if sink + window >= T)."""
    _check_attn(q, k, v, sink, window)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    q, k, v = _f32(q), _f32(k), _f32(v)
    if _use_ext(q):
        return torch.ops.icml25.decode_attention(q, k, v, int(sink), int(window), scale)
    return reference.decode_attention(q, k, v, int(sink), int(window), scale)


def spec_decode_attention(q, k, v, sink: int, window: int, lam: float, scale: float | None = None):
    """(o_exact [B, H, D], o_spec [B, H, D], accept bool [B, H]); accept = ‖o_exact − o_spec‖ < lam‖o_exact‖."""
    _check_attn(q, k, v, sink, window)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    q, k, v = _f32(q), _f32(k), _f32(v)
    if _use_ext(q):
        return tuple(torch.ops.icml25.spec_decode_attention(q, k, v, int(sink), int(window), float(lam), scale))
    return reference.spec_decode_attention(q, k, v, int(sink), int(window), float(lam), scale)


_load()

__all__ = [
    "Int4Weight",
    "Sparse24Int4Weight",
    "cpu_amx_enabled",
    "cpu_vnni_enabled",
    "decode_attention",
    "e8_nearest",
    "extension_available",
    "int4_linear",
    "nestquant_decode",
    "nestquant_encode",
    "nestquant_matmul",
    "pack_int4",
    "pack_sparse24_int4",
    "quantize_int4_rtn",
    "reference",
    "sparse24_int4_linear",
    "spec_decode_attention",
]
