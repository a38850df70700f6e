"""SLiM-LoRA and Naive-LoRA: low-rank adapters computed in closed form from the compression error (Section 3.3).

Saliency F(E) = E diag(d), d_j = sqrt(mean over calibration tokens of x_j^2). F is linear in E
(additive: F(A + B) = F(A) + F(B)) and invertible where every d_j > 0 (F^-1(G) = G diag(1/d)),
and ||F(E)||_F^2 = sum_ij E_ij^2 E[x_j^2], the expected output error of E with the off-diagonal input
correlations dropped. SLiM-LoRA takes the rank-r truncated SVD of F(E) (optimal for that weighted
norm by Eckart-Young), E = W - Q(P(W)) the quantization + sparsity error, maps it back with F^-1
(on the right factor), and re-compresses the base as Q(P(W - L R)) so the base absorbs what the
adapters do not. Naive-LoRA is the same with F = identity (SVD of the raw error).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .prune import prune_2_4
from .quant import QuantizedMatrix, fake_quantize_groups, quantize_matrix

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
    """Truncated SVD: L (N, r) = U_r S_r, R (r, K) = V_r^T, so L R is the best rank-r approximation of e."""
    u, s, vh = torch.linalg.svd(e.double(), full_matrices=False)
    return u[:, :rank] * s[:rank].unsqueeze(0), vh[:rank]


def adapter_rank(shape: tuple[int, int], rank_ratio: float) -> int:
    """r = floor(rank_ratio * min(N, K)), at least 1 (paper default: 10% of the smaller dimension); the
    official `add_lora` truncates with int(), so (256, 512) at 0.1 gives 25, not round(25.6) = 26."""
    return max(1, int(rank_ratio * min(shape)))


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


def compress_weight(w: torch.Tensor, *, pruner: str, quantizer: str, bits: int, adapter: str = "none",
                    rank_ratio: float = 0.1, mean_sq: torch.Tensor | None = None,
                    hessian: torch.Tensor | None = None, group_size: int = 128, n_bins: int | None = None,
                    adapter_bits: int | None = None, adapter_group_size: int = 128,
                    damp: float = 0.01) -> CompressedWeight:
    """One linear weight through a SLiM recipe: prune to 2:4, quantize, then (optionally) the adapters.

    adapter: 'none' | 'naive' (SVD of W - Q(P(W))) | 'slim' (SVD of F(W) - F(Q(P(W))), mapped back).
    adapter_bits: quantize L and R with per-group RTN (Section 3.4) before the base is re-compressed.
    """
    w = w.detach().float()
    quant = lambda m: quantize_matrix(m, quantizer, bits, group_size, n_bins)  # noqa: E731
    pruned, mask = prune_2_4(w, pruner, mean_sq=mean_sq, hessian=hessian, damp=damp)
    base = quant(pruned)
    if adapter == "none":
        return CompressedWeight(base, mask)
    if adapter not in ("naive", "slim"):
        raise ValueError(f"unknown adapter {adapter!r}; use 'none', 'naive' or 'slim'")
    err = w.double() - base.dequantize().double()
    rank = adapter_rank(tuple(w.shape), rank_ratio)
    if adapter == "slim":
        if mean_sq is None:
            raise ValueError("adapter 'slim' needs the calibration mean of x^2 of the layer")
        d = saliency_weights(mean_sq)
        lora_l, r_weighted = low_rank_factors(saliency(err, d), rank)
        lora_r = saliency_inverse(r_weighted, d)
    else:
        lora_l, lora_r = low_rank_factors(err, rank)
    lora_l, lora_r = lora_l.float(), lora_r.float()
    if adapter_bits is not None:
        lora_l = fake_quantize_groups(lora_l, adapter_bits, adapter_group_size)
        lora_r = fake_quantize_groups(lora_r, adapter_bits, adapter_group_size)
    residual = w - (lora_l.double() @ lora_r.double()).float()
    base_pruned, _ = prune_2_4(residual, pruner, mean_sq=mean_sq, hessian=hessian, mask=mask, damp=damp)
    return CompressedWeight(quant(base_pruned), mask, lora_l, lora_r)


def weighted_error(w: torch.Tensor, w_hat: torch.Tensor, mean_sq: torch.Tensor) -> float:
    """||F(W - W_hat)||_F^2 / ||F(W)||_F^2: the saliency-weighted relative error."""
    d = mean_sq.double().clamp_min(0).sqrt()
    diff = saliency(w.double() - w_hat.double(), d)
    return float((diff ** 2).sum() / (saliency(w.double(), d) ** 2).sum())


def output_error(w: torch.Tensor, w_hat: torch.Tensor, hessian: torch.Tensor) -> float:
    """Relative layer output error E||(W - W_hat) x||^2 / E||W x||^2 = tr(D H D^T) / tr(W H W^T), H = E[x x^T]."""
    h = hessian.double()
    diff = w.double() - w_hat.double()
    num = torch.einsum("nk,kl,nl->", diff, h, diff)
    den = torch.einsum("nk,kl,nl->", w.double(), h, w.double())
    return float(num / den)
