"""Pure-PyTorch references of every kernel in methods.kernels: the oracle the compiled ops are tested against.

Each function is written to be obviously correct, not fast. The compiled ops (csrc/, namespace
``torch.ops.icml25``) compute the same numbers on the same packed formats.

Packed formats
--------------
int4 weight-only (``Int4Weight``), weight W [N, K]:
- ``packed`` uint8 [N, ceil(K/2)]: byte j of row n holds nibble u[n, 2j] in its low 4 bits and u[n, 2j+1]
  in its high 4 bits (a missing last nibble, K odd, is 0).
- ``scales`` float32 [N, G], G = ceil(K / group_size); group g covers columns [g*group_size, (g+1)*group_size) ∩ [0, K).
- ``zeros`` float32 [N, G]: W[n, k] = scales[n, g] * (u[n, k] - zeros[n, g]).
  Symmetric quantization (caller's qint in [-8, 7]) is stored as u = qint + 8 with zeros = 8.
  Asymmetric quantization (caller's qint in [0, 15] with zero point z) is stored as u = qint, zeros = z.

2:4 sparse + int4 (``Sparse24Int4Weight``; SLiM's deployment format), W [N, K], symmetric only
(SLiM quantizes with a symmetric absmax / SLiM-Quant scale, so a pruned entry is exactly 0):
- K is split into aligned groups of 4 (K padded with zeros to a multiple of 4); each group keeps 2 slots.
- ``values`` uint8 [N, K4] (K4 = ceil(K/4)): byte j holds slot 0 of group j in the low nibble and slot 1 in
  the high nibble, each as u = q + 8 (q in [-8, 7]); an unused slot holds u = 8 (value 0).
- ``meta`` uint8 [N, ceil(K4/2)]: the 2-bit positions (0..3 inside the group) of the two slots; group j
  uses 4 bits starting at bit 4*(j % 2) of byte j // 2: bits 0-1 = position of slot 0, bits 2-3 = slot 1,
  with position(slot 0) < position(slot 1).  Equivalently, slot s (s = 2j + t) has its position at bits
  2s..2s+1 of the little-endian bit stream of the row's meta bytes.
- ``scales`` float32 [N, G] over the ORIGINAL column index k, as for int4: W[n, 4j + pos] = scales[n, g(k)] * q.
Storage per weight: 0.25 + 0.125 bytes (values + meta) vs 0.5 for dense int4 and 4 for fp32.

E8 / NestQuant (nested lattice codes, NestQuant paper Sec. 3-4; Conway & Sloane, SPLAG ch. 20):
- E8 = D8 ∪ (D8 + ½·1); generator matrix ``E8_GENERATOR`` (rows are basis vectors, lattice points t = c @ G).
- Encode an 8-vector x with nesting ratio q and scale β: t = Q_E8(x / β); c = (t G⁻¹) mod q (integers 0..q-1,
  stored as uint8, so q <= 256); decode: y = c G, x̂ = β (y - q Q_E8(y / q)).  With several scales
  ``betas`` the index of the β with the smallest ‖x - x̂‖² is stored per 8-vector (``beta_idx``, uint8).
- A NestQuant weight W [N, K] (K % 8 == 0) is codes uint8 [N, K/8, 8] and beta_idx uint8 [N, K/8].

Determinism: rounding is round-half-to-even (torch.round, C nearbyint); ties in "the coordinate with the
largest rounding error" go to the lowest index; ties between the D8 and the D8+½ candidate go to D8;
ties between betas go to the lowest index. Squared norms of 8-vectors are summed left to right.
"""

from __future__ import annotations

import torch

E8_GENERATOR = torch.tensor(
    [
        [2.0, 0, 0, 0, 0, 0, 0, 0],
        [-1, 1, 0, 0, 0, 0, 0, 0],
        [0, -1, 1, 0, 0, 0, 0, 0],
        [0, 0, -1, 1, 0, 0, 0, 0],
        [0, 0, 0, -1, 1, 0, 0, 0],
        [0, 0, 0, 0, -1, 1, 0, 0],
        [0, 0, 0, 0, 0, -1, 1, 0],
        [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
    ],
    dtype=torch.float64,
)


# ----------------------------------------------------------------------------- int4 weight-only


def pack_int4(qint: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor | None, group_size: int):
    """Pack integer weights [N, K] into (packed uint8 [N, ceil(K/2)], scales [N, G], zeros [N, G]) (see module doc)."""
    n, k = qint.shape
    q = qint.to(torch.int64)
    if zeros is None:
        u = q + 8
        zeros = torch.full_like(scales, 8.0, dtype=torch.float32)
    else:
        u = q
    if k % 2:
        u = torch.cat([u, u.new_zeros(n, 1)], dim=1)
    packed = (u[:, 0::2] | (u[:, 1::2] << 4)).to(torch.uint8)
    return packed, scales.to(torch.float32).contiguous(), zeros.to(torch.float32).contiguous()


def unpack_int4(packed: torch.Tensor, k: int) -> torch.Tensor:
    """The nibbles u [N, K] (int64) of a packed int4 matrix."""
    p = packed.to(torch.int64)
    u = torch.stack([p & 15, p >> 4], dim=-1).reshape(p.shape[0], -1)
    return u[:, :k]


def _expand_groups(t: torch.Tensor, group_size: int, k: int) -> torch.Tensor:
    return t.repeat_interleave(group_size, dim=1)[:, :k]


def dequantize_int4(packed, scales, zeros, group_size: int, k: int) -> torch.Tensor:
    u = unpack_int4(packed, k).to(torch.float32)
    return _expand_groups(scales, group_size, k) * (u - _expand_groups(zeros, group_size, k))


def int4_linear(x, packed, scales, zeros, group_size: int, k: int) -> torch.Tensor:
    """x [..., K] @ dequant(W)^T -> [..., N] in float32."""
    return x.to(torch.float32) @ dequantize_int4(packed, scales, zeros, group_size, k).T


# ----------------------------------------------------------------------------- 2:4 sparse + int4


def pack_sparse24_int4(qint: torch.Tensor, scales: torch.Tensor, group_size: int, mask: torch.Tensor | None = None):
    """Pack a 2:4-sparse symmetric int4 matrix qint [N, K] (entries in [-8, 7]) into (values, meta, scales).

    ``mask`` (bool [N, K], default ``qint != 0``) marks the kept entries; at most 2 per aligned group of 4.
    """
    n, k = qint.shape
    if mask is None:
        mask = qint != 0
    k4 = -(-k // 4)
    pad = 4 * k4 - k
    q = torch.nn.functional.pad(qint.to(torch.int64), (0, pad)).reshape(n, k4, 4)
    m = torch.nn.functional.pad(mask.to(torch.bool), (0, pad)).reshape(n, k4, 4)
    if m.numel() and int(m.sum(-1).max()) > 2:
        raise ValueError("qint/mask: more than 2 kept entries in an aligned group of 4 along K (not 2:4 sparse)")
    # positions of the kept entries first (stable order), then the unused positions as fillers
    order = torch.argsort((~m).to(torch.int64), dim=-1, stable=True)  # [N, K4, 4]
    pos = order[..., :2]  # first two: kept ones (or fillers)
    kept = torch.gather(m, -1, pos)
    vals = torch.where(kept, torch.gather(q, -1, pos), torch.zeros_like(pos))
    # a filler slot may be placed in front of a kept slot; keep positions increasing
    swap = pos[..., 0] > pos[..., 1]
    pos = torch.where(swap[..., None], pos.flip(-1), pos)
    vals = torch.where(swap[..., None], vals.flip(-1), vals)
    u = vals + 8
    values = (u[..., 0] | (u[..., 1] << 4)).to(torch.uint8)
    nib = pos[..., 0] | (pos[..., 1] << 2)  # [N, K4]
    if k4 % 2:
        nib = torch.cat([nib, nib.new_zeros(n, 1)], dim=1)
    meta = (nib[:, 0::2] | (nib[:, 1::2] << 4)).to(torch.uint8)
    return values, meta, scales.to(torch.float32).contiguous()


def dequantize_sparse24_int4(values, meta, scales, group_size: int, k: int) -> torch.Tensor:
    n, k4 = values.shape
    v = values.to(torch.int64)
    q = torch.stack([v & 15, v >> 4], dim=-1) - 8  # [N, K4, 2]
    mt = meta.to(torch.int64)
    nib = torch.stack([mt & 15, mt >> 4], dim=-1).reshape(n, -1)[:, :k4]
    pos = torch.stack([nib & 3, nib >> 2], dim=-1)  # [N, K4, 2]
    dense = torch.zeros(n, k4, 4, dtype=torch.int64, device=values.device)
    dense.scatter_(-1, pos, q)
    dense = dense.reshape(n, 4 * k4)[:, :k].to(torch.float32)
    return _expand_groups(scales, group_size, k) * dense


def sparse24_int4_linear(x, values, meta, scales, group_size: int, k: int, lora_l=None, lora_r=None):
    """x W^T + (x R^T) L^T with W the dequantized 2:4 int4 matrix, L [N, r], R [r, K]."""
    x = x.to(torch.float32)
    y = x @ dequantize_sparse24_int4(values, meta, scales, group_size, k).T
    if lora_l is not None:
        y = y + (x @ lora_r.to(torch.float32).T) @ lora_l.to(torch.float32).T
    return y


# ----------------------------------------------------------------------------- E8 / NestQuant


def _sqnorm8(d: torch.Tensor) -> torch.Tensor:
    """Squared norm over the last dim (size 8), summed left to right (the compiled ops use the same order)."""
    s = d[..., 0] * d[..., 0]
    for i in range(1, 8):
        s = s + d[..., i] * d[..., i]
    return s


def d8_nearest(x: torch.Tensor) -> torch.Tensor:
    """Nearest point of D8 (integer vectors with even sum): round, and if the sum is odd re-round the
    coordinate with the largest rounding error the other way (Conway & Sloane)."""
    f = torch.round(x)
    d = x - f
    odd = (torch.remainder(f, 2).sum(-1) % 2) != 0  # parity summed exactly, also for huge coordinates
    i = d.abs().argmax(-1, keepdim=True)  # first index of the maximum
    step = torch.where(torch.gather(d, -1, i) >= 0, 1.0, -1.0).to(x.dtype)
    flip = torch.zeros_like(f).scatter_(-1, i, step)
    return torch.where(odd[..., None], f + flip, f)


def e8_nearest(x: torch.Tensor) -> torch.Tensor:
    """Nearest point of E8 = D8 ∪ (D8 + ½): the closer of the two coset candidates (D8 on a tie)."""
    x = x.to(torch.float32)
    a = d8_nearest(x)
    b = d8_nearest(x - 0.5) + 0.5
    da, db = _sqnorm8(x - a), _sqnorm8(x - b)
    return torch.where((da <= db)[..., None], a, b)


def _coords(t: torch.Tensor) -> torch.Tensor:
    """Integer coordinates c with t = c @ G."""
    ginv = torch.linalg.inv(E8_GENERATOR).to(t.device)
    return torch.round(t.to(torch.float64) @ ginv).to(torch.int64)


def nestquant_decode_coords(codes: torch.Tensor, q: int) -> torch.Tensor:
    """y - q Q_E8(y / q) with y = codes @ G: the representative of the coset in the Voronoi region of qE8."""
    y = (codes.to(torch.float64) @ E8_GENERATOR.to(codes.device)).to(torch.float32)
    return y - q * e8_nearest(y / torch.full_like(y, q))  # a true division (torch may turn "/ scalar" into "* 1/q")


def nestquant_encode(x: torch.Tensor, q: int, betas: torch.Tensor):
    """Per 8-vector of x [..., 8]: codes uint8 [..., 8] and beta_idx uint8 [...] of the β with the least error."""
    x = x.to(torch.float32)
    betas = betas.to(device=x.device, dtype=torch.float32)
    xb = x[..., None, :] / betas[:, None]  # [..., nb, 8]
    c = torch.remainder(_coords(e8_nearest(xb)), q)  # [..., nb, 8]
    xhat = betas[:, None] * nestquant_decode_coords(c, q)
    err = _sqnorm8(x[..., None, :] - xhat)  # [..., nb]
    idx = err.argmin(-1)  # first minimum
    codes = torch.gather(c, -2, idx[..., None, None].expand(*idx.shape, 1, 8)).squeeze(-2)
    return codes.to(torch.uint8), idx.to(torch.uint8)


def nestquant_decode(codes: torch.Tensor, beta_idx: torch.Tensor, q: int, betas: torch.Tensor) -> torch.Tensor:
    beta = betas.to(device=beta_idx.device, dtype=torch.float32)[beta_idx.to(torch.int64)]
    return beta[..., None] * nestquant_decode_coords(codes, q)


def nestquant_matmul(x, codes, beta_idx, q: int, betas, shape) -> torch.Tensor:
    """x [M, K] @ W^T with W [N, K] = decode(codes [N, K/8, 8], beta_idx [N, K/8])."""
    n, k = shape
    w = nestquant_decode(codes, beta_idx, q, betas).reshape(n, k)
    return x.to(torch.float32) @ w.T


# ----------------------------------------------------------------------------- speculative decode attention


def decode_attention(q, k, v, sink: int, window: int, scale: float) -> torch.Tensor:
    """One query per head q [B, H, D] attending to keys [0, sink) ∪ [T - window, T) of k, v [B, H, T, D];
    all T keys when sink + window >= T."""
    t = k.shape[-2]
    if sink + window < t:
        idx = torch.cat([torch.arange(sink), torch.arange(t - window, t)])
        k, v = k[..., idx, :], v[..., idx, :]
    s = torch.einsum("bhd,bhtd->bht", q.to(torch.float32), k.to(torch.float32)) * scale
    return torch.einsum("bht,bhtd->bhd", torch.softmax(s, dim=-1), v.to(torch.float32))


def spec_decode_attention(q, k, v, sink: int, window: int, lam: float, scale: float):
    """(o_exact, o_spec, accept) with accept = ‖o_exact − o_spec‖ < lam·‖o_exact‖ per (batch, head)."""
    o = decode_attention(q, k, v, k.shape[-2], 0, scale)
    o_spec = decode_attention(q, k, v, sink, window, scale)
    accept = torch.linalg.vector_norm(o - o_spec, dim=-1) < lam * torch.linalg.vector_norm(o, dim=-1)
    return o, o_spec, accept
