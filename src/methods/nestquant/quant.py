"""NestQuant quantizers and the scalar baselines it is compared with (Savkin, Porat, Ordentlich,
Polyanskiy, ICML 2025).

- `random_hadamard` / `rotate` / `unrotate`: randomized Hadamard rotation x -> H (D x) (Sec. 4: entries
  of rotated rows look Gaussian). Widths that are not powers of two: `kronecker` (the default, as the
  official code and QuaRot build it) uses H_K (x) H_{n/K} with a small Hadamard order K (`hadamard.py`,
  MiniLM's 384 = 12 x 32); `block` uses block-diagonal H over the largest power-of-two block that
  divides the width (384 = 3 x 128).
- `nestquant`: rows scaled to norm sqrt(K), split into 8-blocks, each coded by the nested E8 lattice
  code (Voronoi code of qE8 at the best of several scales beta) through `methods.kernels`
  (nestquant_encode / nestquant_decode: the compiled op when built, the reference otherwise).
- `nestquant_rate`: exact bits per entry = log2(q) + log2(#betas)/8 + scale bits / K.
- `rtn`: symmetric absmax round-to-nearest per channel or per group; `uniform_clipped`: uniform scalar
  quantizer with the MSE-optimal clipping level (searched), the paper's scalar reference.
- `ldlq`: LDLQ / GPTQ error feedback from a calibration Hessian H = E[x x^T] with blocks of 8 columns
  quantized jointly (block LDL via the upper Cholesky factor of H^{-1}).
"""

from __future__ import annotations

import math

import torch

from methods import kernels

from .hadamard import hadamard_order, small_hadamard

E8_NSM = 0.0716821  # normalized second moment G(E8) (Conway & Sloane, SPLAG Table 2.3); cube: 1/12
WEIGHT_BETAS = (4.0, 5.5, 7.0, 18.0)  # authors' weight scales, divided by q at use


def nestquant_rate(q: int, n_betas: int, row_len: int | None = None, scale_bits: int = 16) -> float:
    """Bits per entry: log2(q) per coordinate, log2(#betas) per 8-vector, one fp16 scale per row."""
    rate = math.log2(q) + math.log2(n_betas) / 8
    return rate + (scale_bits / row_len if row_len else 0.0)


def rtn_rate(bits: int, group_size: int | None, row_len: int, scale_bits: int = 16) -> float:
    """Bits per entry of symmetric RTN: `bits` plus one fp16 scale per group (or per row)."""
    return bits + scale_bits / (group_size or row_len)


def _pow2_block(n: int) -> int:
    return n & (-n)


def fwht(x: torch.Tensor) -> torch.Tensor:
    """Orthonormal fast Walsh-Hadamard transform over the last dim (a power of two)."""
    n = x.shape[-1]
    if n & (n - 1):
        raise ValueError(f"fwht: last dim {n} is not a power of two")
    y = x.reshape(-1, n).clone()
    buf = torch.empty_like(y)  # butterflies write into the other of two buffers (no per-stage allocation)
    h = 1
    while h < n:
        src, dst = y.view(-1, n // (2 * h), 2, h), buf.view(-1, n // (2 * h), 2, h)
        a, b = src[:, :, 0], src[:, :, 1]
        torch.add(a, b, out=dst[:, :, 0])
        torch.sub(a, b, out=dst[:, :, 1])
        y, buf = buf, y
        h *= 2
    return (y / math.sqrt(n)).view(x.shape)


def random_hadamard(n: int, seed: int) -> torch.Tensor:
    """Random signs D of the rotation x -> H D x (the only random part; same seed, same rotation)."""
    g = torch.Generator().manual_seed(int(seed))
    return (torch.randint(0, 2, (n,), generator=g) * 2 - 1).float()


ROTATIONS = ("kronecker", "block")  # constructions for widths that are not powers of two; kronecker: official


def _check_rotation(construction: str) -> None:
    if construction not in ROTATIONS:
        raise ValueError(f"rotation {construction!r} is not one of {ROTATIONS} (config key nestquant.quant.rotation)")


def _hadamard(x: torch.Tensor, construction: str, transpose: bool = False) -> torch.Tensor:
    """H applied to every row x [..., n] (H^T with transpose=True), H the orthonormal Hadamard of width n."""
    n = x.shape[-1]
    if construction == "block":  # symmetric Sylvester blocks
        b = _pow2_block(n)
        return fwht(x.reshape(*x.shape[:-1], n // b, b)).reshape(x.shape)
    k = hadamard_order(n)
    y = fwht(x.reshape(*x.shape[:-1], k, n // k))  # H_{n/K} on the fast axis (symmetric)
    if k > 1:
        hk = small_hadamard(k).to(device=x.device, dtype=x.dtype) / math.sqrt(k)
        y = (hk.T if transpose else hk) @ y  # H_K on the slow axis (batched over the leading dims)
    return y.reshape(x.shape)


def rotate(x: torch.Tensor, signs: torch.Tensor, construction: str = "kronecker") -> torch.Tensor:
    """x [..., n] -> H (signs * x) per row, H the orthonormal Hadamard of width n built by `construction`
    (ROTATIONS); orthogonal, so <rotate(a), rotate(b)> = <a, b>."""
    _check_rotation(construction)
    return _hadamard(x * signs.to(device=x.device, dtype=x.dtype), construction)


def unrotate(y: torch.Tensor, signs: torch.Tensor, construction: str = "kronecker") -> torch.Tensor:
    """The inverse of `rotate`: D H^T y (H_K of Paley's first kind is not symmetric)."""
    _check_rotation(construction)
    return _hadamard(y, construction, transpose=True) * signs.to(device=y.device, dtype=y.dtype)


SCALE_DTYPES = {"float32": torch.float32, "float16": torch.float16}


def nestquant(x: torch.Tensor, q: int, betas, scale_rows: bool = True, scale_dtype: str = "float32") -> torch.Tensor:
    """Dequantized NestQuant of x [..., K] (K % 8 == 0): rows scaled to norm sqrt(K), every 8-block coded
    with nested E8 at nesting ratio q and the best of `betas` (already / q) (Sec. 4, Alg. 1).

    scale_dtype 'float32' divides by the exact row norm as the official `quantsim` does; 'float16'
    rounds the scale to the fp16 number a stored model keeps (the rate counts 16 bits per row either way)."""
    k = x.shape[-1]
    if k % 8:
        raise ValueError(f"nestquant: last dim {k} must be a multiple of 8")
    betas = torch.as_tensor(betas, dtype=torch.float32, device=x.device)
    x32 = x.float()
    if scale_dtype not in SCALE_DTYPES:
        raise ValueError(f"nestquant: scale_dtype {scale_dtype!r} is not one of {sorted(SCALE_DTYPES)}")
    if scale_rows:
        s = (x32.norm(dim=-1, keepdim=True) / math.sqrt(k)).to(SCALE_DTYPES[scale_dtype]).float().clamp_min(1e-8)
    else:
        s = torch.ones(*x.shape[:-1], 1, device=x.device)
    blocks = (x32 / s).reshape(*x.shape[:-1], k // 8, 8)
    codes, idx = kernels.nestquant_encode(blocks, q, betas)
    return (kernels.nestquant_decode(codes, idx, q, betas).reshape(x.shape) * s).to(x.dtype)


def rtn(x: torch.Tensor, bits: int, group_size: int | None = None, levels: int | None = None) -> torch.Tensor:
    """Symmetric absmax round-to-nearest over rows (group_size None) or groups of the last dim. `levels` (odd)
    replaces the 2^bits-level grid by one of `levels` points -(L-1)/2 .. (L-1)/2 (rate log2(levels) bits per
    entry): 17 levels, 4.09 bits, is the scalar quantizer at no less than NestQuant's 4.06 bits (q = 14)."""
    k = x.shape[-1]
    g = group_size or k
    if k % g:
        raise ValueError(f"rtn: last dim {k} is not a multiple of group_size {g}")
    if levels is not None and (levels < 3 or levels % 2 == 0):
        raise ValueError(f"rtn: levels must be odd and >= 3, got {levels}")
    qmax = 2 ** (bits - 1) - 1 if levels is None else (levels - 1) // 2
    lo = -qmax - 1 if levels is None else -qmax
    y = x.float().reshape(*x.shape[:-1], k // g, g)
    scale = (y.abs().amax(-1, keepdim=True) / qmax).half().float().clamp_min(1e-8)
    return (torch.clamp(torch.round(y / scale), lo, qmax) * scale).reshape(x.shape).to(x.dtype)


def rtn_levels_rate(levels: int, row_len: int, scale_bits: int = 16) -> float:
    """Bits per entry of `rtn(..., levels=L)`: log2(L) plus one fp16 scale per row."""
    return math.log2(levels) + scale_bits / row_len


def uniform_clipped(x: torch.Tensor, levels: int, ratios=None) -> torch.Tensor:
    """Uniform scalar quantizer with `levels` cells on [-c, c], c = ratio * std, ratio chosen for least MSE
    (the scalar baseline "uniform with optimal clipping" at rate log2(levels))."""
    ratios = torch.linspace(1.0, 5.0, 81) if ratios is None else torch.as_tensor(ratios)
    x32 = x.float()
    std = x32.pow(2).mean().sqrt().clamp_min(1e-12)
    best, best_err = None, float("inf")
    for r in ratios.tolist():
        c = r * std
        step = 2 * c / levels
        idx = torch.clamp(torch.floor((x32 + c) / step), 0, levels - 1)
        y = -c + (idx + 0.5) * step
        err = (y - x32).pow(2).mean().item()
        if err < best_err:
            best, best_err = y, err
    return best.to(x.dtype)


LDLQ_ORDERS = ("backward", "forward")


def _block_reversal(k: int, block: int) -> torch.Tensor:
    """Column permutation that reverses the order of the blocks (and keeps each block's columns in order)."""
    return torch.arange(k).reshape(k // block, block).flip(0).reshape(-1)


def ldlq(
    w: torch.Tensor, hessian: torch.Tensor, quantize, block: int = 8, damp: float = 0.01, order: str = "backward"
) -> torch.Tensor:
    """LDLQ / GPTQ with joint blocks (Sec. 4.2): quantize columns [i, i+block) of W [N, K] with `quantize`
    ([N, block] -> [N, block]) and feed the error on to the columns not yet quantized. Minimizes
    tr((W - Q) H (W - Q)^T) greedily.

    order 'backward' (the official `encode_matrix_LDLQ_try_all`: last block first, feedback through
    the block-LDL factor of H) is LDLQ on the block-reversed columns; 'forward' (first block first,
    GPTQ's form: W[:, rest] -= (W_b - Q_b) U_bb^{-1} U[b, rest], U the upper Cholesky factor of H^{-1})."""
    n, k = w.shape
    if k % block:
        raise ValueError(f"ldlq: K = {k} is not a multiple of block = {block}")
    if order not in LDLQ_ORDERS:
        raise ValueError(f"ldlq: order {order!r} is not one of {LDLQ_ORDERS}")
    if order == "backward":
        perm = _block_reversal(k, block)
        out = ldlq(w[:, perm], hessian[perm][:, perm], quantize, block, damp, order="forward")
        return out[:, torch.argsort(perm)]
    h = hessian.double().clone()
    dead = torch.diag(h) == 0
    h[dead, dead] = 1.0
    h += damp * torch.diag(h).mean() * torch.eye(k, dtype=h.dtype, device=h.device)
    u = torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(h)), upper=True)
    w = w.double().clone()
    out = torch.empty_like(w)
    for i in range(0, k, block):
        j = i + block
        qb = quantize(w[:, i:j].float()).double()
        out[:, i:j] = qb
        err = torch.linalg.solve_triangular(u[i:j, i:j], (w[:, i:j] - qb), upper=True, left=False)
        w[:, j:] -= err @ u[i:j, j:]
    return out.float()


def proxy_loss(w: torch.Tensor, w_hat: torch.Tensor, hessian: torch.Tensor) -> float:
    """tr((W - Ŵ) H (W - Ŵ)^T): the layer-output error that LDLQ / GPTQ minimize."""
    d = (w - w_hat).double()
    return float(torch.einsum("nk,kl,nl->", d, hessian.double(), d))
