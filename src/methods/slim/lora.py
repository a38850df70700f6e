"""SLiM-LoRA and Naive-LoRA: low-rank adapters computed in closed form from the compression error (Section 3.3).

Saliency F(E) = E diag(d), d_j = sqrt(mean over calibration tokens of x_j^2). F is linear in E
(additive: F(A + B) = F(A) + F(B)) and invertible where every d_j > 0 (F^-1(G) = G diag(1/d)),
and ||F(E)||_F^2 = sum_ij E_ij^2 E[x_j^2], the expected output error of E with the off-diagonal input
correlations dropped. SLiM-LoRA takes the rank-r truncated SVD of F(E) (optimal for that weighted
norm by Eckart-Young), E = W - P(Q(W)) the quantization + sparsity error (the official order: quantize
the dense weight, then mask; Q(P(W)) as an option), maps it back with F^-1 (on the right factor), and
re-compresses the base as Q(P(W - L R)) so the base absorbs what the adapters do not. Naive-LoRA is
the same with F = identity (SVD of the raw error).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .prune import prune_2_4, shift_zeros
from .quant import QuantizedMatrix, fake_quantize_adapter, quantize_matrix

EPS = 1e-8


def saliency(e: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """F(E) = E diag(d)."""
    return e * d.unsqueeze(0)


def saliency_inverse(g: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """F^-1(G) = G diag(1/d); needs every d_j > 0."""
    if bool((d <= 0).any()):
        raise ValueError("saliency_inverse: some input has zero calibration energy; F is not invertible there")
    return g / d.unsqueeze(0)


def saliency_weights(mean_sq: torch.Tensor) -> torch.Tensor:
    """d = sqrt(mean x^2), floored so that F stays invertible on inputs the calibration never excites."""
    d = mean_sq.double().clamp_min(0).sqrt()
    floor = EPS * float(d.max()) if float(d.max()) > 0 else 1.0
    return d.clamp_min(floor)


def low_rank_factors(e: torch.Tensor, rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Truncated SVD E = U S V^T: L (N, r) = U_r, R (r, K) = S_r V_r^T, so L R is the best rank-r
    approximation of e. The singular values sit on R as in the official `add_lora` (its lora_left is
    (S V^T)^T), which matters once the factors are quantized group by group."""
    u, s, vh = torch.linalg.svd(e.double(), full_matrices=False)
    return u[:, :rank], s[:rank].unsqueeze(1) * vh[:rank]


def adapter_rank(shape: tuple[int, int], rank_ratio: float, multiple: int | None = None) -> int:
    """r = floor(rank_ratio * min(N, K)), at least 1 (paper default: 10% of the smaller dimension); the
    official `add_lora` truncates with int(), so (256, 512) at 0.1 gives 25, not round(25.6) = 26.

    With `multiple` (the official quantized adapters: the lora tile) r is rounded up to a multiple of it,
    25 -> 128 at 256 x 512, as the official `add_lora` pads; capped at min(N, K), where the official SVD
    runs out of singular values."""
    rank = max(1, int(rank_ratio * min(shape)))
    if multiple:
        rank = -(-rank // multiple) * multiple
    return min(rank, min(shape))


ORDERS = ("quantize_first", "prune_first")
ADAPTER_QUANT_ORDERS = ("after_base", "before_base")


@dataclass
class CompressedWeight:
    """A compressed linear weight: 2:4 sparse quantized base plus optional low-rank adapters L R."""

    base: QuantizedMatrix
    mask: torch.Tensor  # (N, K) bool, True where kept
    lora_l: torch.Tensor | None = None  # (N, r)
    lora_r: torch.Tensor | None = None  # (r, K)

    def dense(self) -> torch.Tensor:
        """The effective weight W_hat = deq(base) + L R that the layer applies."""
        w = self.base.dequantize()
        if self.lora_l is not None:
            w = w + (self.lora_l.double() @ self.lora_r.double()).float()
        return w


def masked(q: QuantizedMatrix, mask: torch.Tensor) -> QuantizedMatrix:
    """The quantized matrix with the pruned entries set to the zero level (mask True = kept)."""
    return QuantizedMatrix(q.qint * mask.to(q.qint.dtype), q.scale, q.bits, q.group_size)


def first_pass(w: torch.Tensor, mask: torch.Tensor, pruned: torch.Tensor, quant, order: str) -> QuantizedMatrix:
    """The compressed weight before adapters (Section 3.2): the official default quantizes the dense
    weight and then applies the mask (`quantize_first=True`), the alternative quantizes the pruned one."""
    if order == "quantize_first":
        return masked(quant(w), mask)
    if order == "prune_first":
        return quant(pruned)
    raise ValueError(f"unknown order {order!r}; use one of {ORDERS}")


def compress_weight(
    w: torch.Tensor,
    *,
    pruner: str,
    quantizer: str,
    bits: int,
    adapter: str = "none",
    rank_ratio: float = 0.1,
    mean_sq: torch.Tensor | None = None,
    hessian: torch.Tensor | None = None,
    group_size: int = 128,
    n_bins: int | None = None,
    adapter_bits: int | None = None,
    adapter_group_size: int = 128,
    damp: float = 0.01,
    order: str = "quantize_first",
    shift_zero_metrics: bool = True,
    pad_rank: bool | None = None,
    adapter_quant_order: str = "after_base",
    clip_search: str = "official",
) -> CompressedWeight:
    """One linear weight through a SLiM recipe: 2:4 mask, quantization, then (optionally) the adapters.

    Defaults follow the official code (Paramathic/slim, `prune_wanda` / `add_lora` / `quantize_lora` as
    the official run script calls them):
    order: 'quantize_first' (mask applied to Q(W)) | 'prune_first' (Q(mask * W)); SparseGPT needs
      'prune_first' (its compensation changes the kept weights).
    shift_zero_metrics: Wanda's metric and the adapter saliency read shift_zeros(mean x^2).
    adapter: 'none' | 'naive' (SVD of W - W_c) | 'slim' (SVD of F(W) - F(W_c), mapped back), W_c the
      first-pass weight; the base is then re-compressed as Q(mask * (W - L R)).
    adapter_bits: quantize L and R by column groups of adapter_group_size (Section 3.4); pad_rank
      (None: when adapter_bits is set, as the official quantized adapters) rounds the rank up to a
      multiple of adapter_group_size. adapter_quant_order: 'after_base' (official: the base absorbs
      the unquantized adapters, which are quantized afterwards) | 'before_base' (the base absorbs the
      quantized ones).
    clip_search: SLiM-Quant's search, 'official' | 'rounding' (see `quant`).
    """
    w = w.detach().float()
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r}; use one of {ORDERS}")
    if order == "quantize_first" and pruner == "sparsegpt":
        raise ValueError(
            "order 'quantize_first' does not apply to pruner 'sparsegpt' (its updates change the "
            "kept weights after quantization); set the recipe's order: prune_first"
        )
    if adapter_quant_order not in ADAPTER_QUANT_ORDERS:
        raise ValueError(f"unknown adapter_quant_order {adapter_quant_order!r}; use one of {ADAPTER_QUANT_ORDERS}")
    quant = lambda m: quantize_matrix(m, quantizer, bits, group_size, n_bins, clip_search)  # noqa: E731
    energy = shift_zeros(mean_sq) if (shift_zero_metrics and mean_sq is not None) else mean_sq
    pruned, mask = prune_2_4(w, pruner, mean_sq=energy, hessian=hessian, damp=damp)
    base = first_pass(w, mask, pruned, quant, order)
    if adapter == "none":
        return CompressedWeight(base, mask)
    if adapter not in ("naive", "slim"):
        raise ValueError(f"unknown adapter {adapter!r}; use 'none', 'naive' or 'slim'")
    err = w.double() - base.dequantize().double()
    pad = (adapter_bits is not None) if pad_rank is None else pad_rank
    rank = adapter_rank(tuple(w.shape), rank_ratio, adapter_group_size if pad else None)
    if adapter == "slim":
        if energy is None:
            raise ValueError("adapter 'slim' needs the calibration mean of x^2 of the layer")
        d = saliency_weights(energy)
        lora_l, r_weighted = low_rank_factors(saliency(err, d), rank)
        lora_r = saliency_inverse(r_weighted, d)
    else:
        lora_l, lora_r = low_rank_factors(err, rank)
    lora_l, lora_r = lora_l.float(), lora_r.float()
    quantize_adapters = lambda: (
        fake_quantize_adapter(lora_l, adapter_bits, adapter_group_size),  # noqa: E731
        fake_quantize_adapter(lora_r, adapter_bits, adapter_group_size),
    )
    if adapter_bits is not None and adapter_quant_order == "before_base":
        lora_l, lora_r = quantize_adapters()
    residual = w - (lora_l.double() @ lora_r.double()).float()
    base_pruned, _ = prune_2_4(residual, pruner, mean_sq=energy, hessian=hessian, mask=mask, damp=damp)
    if adapter_bits is not None and adapter_quant_order == "after_base":
        lora_l, lora_r = quantize_adapters()
    return CompressedWeight(quant(base_pruned), mask, lora_l, lora_r)


def weighted_error(w: torch.Tensor, w_hat: torch.Tensor, mean_sq: torch.Tensor) -> float:
    """||F(W - W_hat)||_F^2 / ||F(W)||_F^2: the saliency-weighted relative error."""
    d = mean_sq.double().clamp_min(0).sqrt()
    diff = saliency(w.double() - w_hat.double(), d)
    return float((diff**2).sum() / (saliency(w.double(), d) ** 2).sum())


def output_energy(w: torch.Tensor, hessian: torch.Tensor) -> float:
    """E||W x||^2 = tr(W H W^T), H = E[x x^T]: the denominator of `output_error`, the same for every
    compression of the layer (computed once per layer by `compress.add_output_energies`)."""
    w = w.double()
    return float(torch.einsum("nk,kl,nl->", w, hessian.double(), w))


def output_error(w: torch.Tensor, w_hat: torch.Tensor, hessian: torch.Tensor, energy: float | None = None) -> float:
    """Relative layer output error E||(W - W_hat) x||^2 / E||W x||^2 = tr(D H D^T) / tr(W H W^T), H = E[x x^T];
    `energy`: tr(W H W^T) when already known (`output_energy`)."""
    diff = w.double() - w_hat.double()
    num = torch.einsum("nk,kl,nl->", diff, hessian.double(), diff)
    return float(num) / (output_energy(w, hessian) if energy is None else energy)
