"""Weight and input quantizers of SLiM (Section 3.1) and the baselines it is compared with.

- `slim_quant_alpha`: SLiM-Quant's clip value. The |W| histogram stands for the weight density p; the
  expected squared error of uniform quantization with clip alpha is
      E(alpha) = int_0^alpha p(x) (x - Q_alpha(x))^2 dx + int_alpha^inf p(x) (x - alpha)^2 dx
  (quantization error below alpha plus clipping error above it), evaluated on the bin centres.
  Two searches (`clip_search`):
  * 'official' (default; the official `find_optimal_quantiztion_cap`): histogram of every |w_ij|
    (zeros included) on [min |w|, max |w|]; Q_alpha floors x to the grid of step alpha / 2^b; a coarse
    grid of every (n_bins // 10)-th centre, then every centre from the coarse neighbour below the
    minimum up to (excluding) the neighbour above it; float32 as the official code.
  * 'rounding' (ours, kept as an option): histogram of the nonzero |w_ij| on [0, max |w|]; Q_alpha
    rounds to the step alpha / (2^(b-1) - 1) that the quantizer really applies; fine search up to and
    including the upper neighbour; float64.
  One symmetric scale per matrix either way.
- `absmax_alpha`: alpha = max |W| (no clipping), the baseline the paper calls AbsMax.
- `quantize_symmetric` / `dequantize`: round(W * s) clamped to [-2^(b-1), 2^(b-1)-1] ([-8, 7] at 4 bits, the
  full two's-complement range, as the official `Quantizer.quantize_block`), s = (2^(b-1)-1)/alpha.
- `quantize_groups_rtn`: per-group symmetric round-to-nearest (absmax per group of `group_size`
  consecutive inputs), the group-wise baseline and the adapter quantizer.
- `quantize_input_per_token`: optional 8-bit symmetric input (activation) quantization, per token.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


def qmax(bits: int) -> int:
    """Largest integer level of a symmetric b-bit quantizer (7 for 4 bits)."""
    if bits < 2:
        raise ValueError(f"quantization bits must be >= 2, got {bits}")
    return 2 ** (bits - 1) - 1


def magnitude_histogram(w: torch.Tensor, n_bins: int) -> tuple[torch.Tensor, torch.Tensor, float]:
    """Density of |w| over its nonzero entries on [0, max|w|]: (density per bin, bin centres, bin width).

    Zeros (pruned entries) are exact under any symmetric quantizer, so they carry no error and are left out.
    """
    a = w.detach().abs().flatten().double().cpu()  # torch.histogram runs on the CPU
    a = a[a > 0]
    if a.numel() == 0:
        raise ValueError("slim_quant_alpha: the matrix has no nonzero entry")
    top = float(a.max())
    density, edges = torch.histogram(a, bins=n_bins, range=(0.0, top), density=True)
    centres = (edges[:-1] + edges[1:]) / 2
    return density, centres, top / n_bins


def expected_error(
    density: torch.Tensor, centres: torch.Tensor, dx: float, alphas: torch.Tensor, bits: int
) -> torch.Tensor:
    """E(alpha) of the module docstring for each alpha in `alphas`, on the histogram (SLiM eq. for E(alpha))."""
    m = qmax(bits)
    x = centres.unsqueeze(0)  # (1, bins)
    a = alphas.double().unsqueeze(1)  # (n_alpha, 1)
    step = a / m
    rounding = (x - torch.round(x / step) * step) ** 2
    clipping = (x - a) ** 2
    err = torch.where(x <= a, rounding, clipping)
    return (err * density.unsqueeze(0)).sum(dim=1) * dx


def default_bins(numel: int) -> int:
    """Histogram resolution grown with the matrix: numel / 1000 bins, within [512, 20000]."""
    return max(512, min(numel // 1000, 20000))


CLIP_SEARCHES = ("official", "rounding")


def official_error(pdf: torch.Tensor, val: torch.Tensor, index: int, bits: int) -> torch.Tensor:
    """E(alpha) at alpha = val[index] as the official search evaluates it (Section 3.1): the centres
    below alpha floored to the step alpha / 2^b, the centres from alpha on clipped to alpha."""
    alpha = val[index]
    dx = val[1] - val[0]
    step = alpha / (2**bits)
    below = val[:index]
    quantization = torch.sum(pdf[:index] * (below - (below // step) * step) ** 2) * dx
    clipping = torch.sum(pdf[index:] * (val[index:] - alpha) ** 2) * dx
    return quantization + clipping


def official_clip_search(w: torch.Tensor, bits: int, n_bins: int) -> float:
    """SLiM-Quant's clip value as the official code searches it (see the module docstring)."""
    pdf, edges = torch.histogram(w.detach().abs().float().flatten().cpu(), bins=n_bins, density=True)
    val = (edges[:-1] + edges[1:]) / 2
    step = n_bins // 10
    losses = torch.full((11,), float("inf"))
    indices = torch.zeros(11, dtype=torch.long)
    for j, i in enumerate(range(0, n_bins, step)):
        losses[j] = official_error(pdf, val, i, bits)
        indices[j] = i
    turning = int(torch.argmin(losses))
    start, end = int(indices[max(turning - 1, 0)]), int(indices[min(turning + 1, 10)])
    total = torch.full((n_bins,), float("inf"))
    for i in range(start, end):
        total[i] = official_error(pdf, val, i, bits)
    return float(val[int(torch.argmin(total))])


def slim_quant_alpha(
    w: torch.Tensor, bits: int = 4, n_bins: int | None = None, n_coarse: int = 10, clip_search: str = "official"
) -> float:
    """SLiM-Quant clip value: minimise E(alpha) over the bin centres, coarse grid then fine search."""
    n_bins = n_bins or default_bins(w.numel())
    if clip_search == "official":
        if float(w.detach().abs().max()) == 0:
            raise ValueError("slim_quant_alpha: the matrix has no nonzero entry")
        return official_clip_search(w, bits, n_bins)
    if clip_search != "rounding":
        raise ValueError(f"unknown clip_search {clip_search!r}; use one of {CLIP_SEARCHES}")
    density, centres, dx = magnitude_histogram(w, n_bins)
    coarse_idx = torch.unique(torch.linspace(0, n_bins - 1, n_coarse + 1).round().long())
    coarse = expected_error(density, centres, dx, centres[coarse_idx], bits)
    best = int(torch.argmin(coarse))
    lo = int(coarse_idx[max(best - 1, 0)])
    hi = int(coarse_idx[min(best + 1, len(coarse_idx) - 1)])
    fine_idx = torch.arange(lo, hi + 1)
    fine = expected_error(density, centres, dx, centres[fine_idx], bits)
    return float(centres[fine_idx[int(torch.argmin(fine))]])


def absmax_alpha(w: torch.Tensor) -> float:
    """AbsMax clip: the largest magnitude (no clipping)."""
    top = float(w.detach().abs().max())
    if top == 0:
        raise ValueError("absmax_alpha: the matrix is all zeros")
    return top


@dataclass
class QuantizedMatrix:
    """Integer levels and one scale per row group: w ~= qint * scale (scale broadcast over groups)."""

    qint: torch.Tensor  # (N, K) int8 holding b-bit levels
    scale: torch.Tensor  # (N, K // group_size) float: the dequantization step of each group
    bits: int
    group_size: int

    def dequantize(self) -> torch.Tensor:
        n, k = self.qint.shape
        steps = self.scale.repeat_interleave(self.group_size, dim=1)[:, :k]
        return self.qint.float() * steps


def quantize_symmetric(w: torch.Tensor, alpha: float, bits: int) -> QuantizedMatrix:
    """Uniform quantization with one scale for the whole matrix: levels round(w * m / alpha) in [-m-1, m].

    The scale is symmetric (alpha maps to m) but the clamp keeps the extra negative level -m-1 of a b-bit
    two's-complement integer, as the official code does: at the same scale it never has a larger error than
    [-m, m] (a value below -alpha - step/2 is now rounded to -m-1 instead of clipped to -m)."""
    m = qmax(bits)
    step = alpha / m
    q = torch.clamp(torch.round(w.detach().float() / step), -m - 1, m).to(torch.int8)
    n, k = w.shape
    return QuantizedMatrix(q, torch.full((n, 1), step, dtype=torch.float32, device=w.device), bits, k)


def quantize_matrix(
    w: torch.Tensor,
    method: str,
    bits: int,
    group_size: int = 128,
    n_bins: int | None = None,
    clip_search: str = "official",
) -> QuantizedMatrix:
    """The weight quantizer of a recipe: 'slim' (SLiM-Quant), 'absmax' or 'group' (per-group RTN)."""
    if method == "slim":
        return quantize_symmetric(w, slim_quant_alpha(w, bits, n_bins, clip_search=clip_search), bits)
    if method == "absmax":
        return quantize_symmetric(w, absmax_alpha(w), bits)
    if method == "group":
        return quantize_groups_rtn(w, bits, group_size)
    raise ValueError(f"unknown weight quantizer {method!r}; use 'slim', 'absmax' or 'group'")


def quantize_groups_rtn(w: torch.Tensor, bits: int, group_size: int) -> QuantizedMatrix:
    """Per-group symmetric RTN: each run of `group_size` consecutive inputs of a row gets its absmax scale."""
    n, k = w.shape
    g = min(group_size, k)
    if k % g:
        raise ValueError(f"group quantization: input size {k} is not a multiple of group_size {g}")
    m = qmax(bits)
    groups = w.detach().float().reshape(n, k // g, g)
    step = groups.abs().amax(dim=2) / m  # (N, K/g)
    step = torch.where(step > 0, step, torch.ones_like(step))
    q = torch.clamp(torch.round(groups / step.unsqueeze(2)), -m, m).reshape(n, k).to(torch.int8)
    return QuantizedMatrix(q, step, bits, g)


def fake_quantize_groups(w: torch.Tensor, bits: int, group_size: int) -> torch.Tensor:
    """w after per-group RTN quantization and dequantization (groups along the last dimension)."""
    return quantize_groups_rtn(w, bits, group_size).dequantize().to(w.dtype)


def fake_quantize_adapter(m: torch.Tensor, bits: int, group_size: int) -> torch.Tensor:
    """An adapter factor after RTN in groups of `group_size` consecutive entries of each COLUMN (Section 3.4).

    The official `quantize_lora` groups 1 x tile blocks of its lora_left (K, r) and lora_right (r, N),
    i.e. runs along r of R^T and along N of L^T in our orientation (L (N, r), R (r, K)): columns of both."""
    return fake_quantize_groups(m.T.contiguous(), bits, group_size).T.contiguous()


def quantize_input_per_token(x: torch.Tensor, bits: int = 8) -> torch.Tensor:
    """Symmetric per-token input quantization (fake-quantized: returned in x's dtype)."""
    m = qmax(bits)
    step = x.detach().abs().amax(dim=-1, keepdim=True) / m
    step = torch.where(step > 0, step, torch.ones_like(step))
    return torch.clamp(torch.round(x / step), -m, m) * step
