"""One-shot 2:4 pruning used by SLiM (Section 3.2): masks from magnitude and Wanda, and SparseGPT.

Masks are boolean (N, K) tensors, True where a weight is KEPT, with exactly 2 kept in every aligned
group of 4 consecutive inputs of a row (the NVIDIA semi-structured pattern the kernel stores).
- `magnitude_score`: |W_ij|.
- `wanda_score` (Sun et al. 2024): |W_ij| * ||X_j||_2 over the calibration inputs of the layer
  (sqrt(mean x_j^2) differs from ||X_j|| by a constant, which does not change the mask).
- `sparsegpt_prune` (Frantar & Alistarh 2023): OBS-style column sweep over the calibration Hessian
  H = X^T X / n; in each group of 4 columns the 2 weights with the smallest w^2 / [H^-1]_jj^2 are
  pruned and the error is propagated to the not-yet-visited columns. With a given mask it only
  applies the compensating updates (used to re-prune W - LR with the same pattern).
"""

from __future__ import annotations

import torch


def mask_2_4(score: torch.Tensor) -> torch.Tensor:
    """Keep the 2 largest scores in every aligned group of 4 along the input dimension."""
    n, k = score.shape
    if k % 4:
        raise ValueError(f"2:4 sparsity needs the input size to be a multiple of 4, got {k}")
    groups = score.reshape(n, k // 4, 4)
    keep = torch.zeros_like(groups, dtype=torch.bool)
    keep.scatter_(2, groups.topk(2, dim=2).indices, True)
    return keep.reshape(n, k)


def magnitude_score(w: torch.Tensor) -> torch.Tensor:
    return w.detach().abs()


def wanda_score(w: torch.Tensor, mean_sq: torch.Tensor) -> torch.Tensor:
    """Wanda's |W_ij| * ||X_j||: mean_sq is the per-input mean of x_j^2 over calibration tokens."""
    if mean_sq.shape != (w.shape[1],):
        raise ValueError(f"wanda_score: mean_sq has shape {tuple(mean_sq.shape)}, expected ({w.shape[1]},)")
    return w.detach().abs() * mean_sq.sqrt().unsqueeze(0)


def shift_zeros(mean_sq: torch.Tensor) -> torch.Tensor:
    """Wanda's metric shift of the official run (`--shift_zero_metrics`): add the smallest nonzero entry
    (1 where it is larger and some entry is 0) to every channel's calibration energy, so that no channel
    has zero energy and the SLiM-LoRA saliency stays invertible."""
    floor = torch.where(mean_sq == 0, torch.ones_like(mean_sq), mean_sq).min()
    return mean_sq + floor


def is_2_4(mask: torch.Tensor) -> bool:
    """True when every aligned group of 4 inputs keeps exactly 2 entries."""
    n, k = mask.shape
    return bool((mask.reshape(n, k // 4, 4).sum(dim=2) == 2).all())


def _inverse_hessian_cholesky(h: torch.Tensor, damp: float) -> torch.Tensor:
    """Upper Cholesky factor of (H + damp * mean(diag H) I)^-1, as SparseGPT sweeps with it."""
    h = h.double().clone()
    dead = torch.diag(h) == 0
    h[dead, dead] = 1.0
    h += damp * torch.mean(torch.diag(h)) * torch.eye(h.shape[0], dtype=h.dtype, device=h.device)
    hinv = torch.cholesky_inverse(torch.linalg.cholesky(h))
    return torch.linalg.cholesky(hinv, upper=True)


def sparsegpt_prune(
    w: torch.Tensor, hessian: torch.Tensor, mask: torch.Tensor | None = None, damp: float = 0.01, block_size: int = 128
) -> tuple[torch.Tensor, torch.Tensor]:
    """SparseGPT 2:4 one-shot pruning; returns (pruned and compensated W, keep-mask)."""
    n, k = w.shape
    if k % 4:
        raise ValueError(f"2:4 sparsity needs the input size to be a multiple of 4, got {k}")
    if hessian.shape != (k, k):
        raise ValueError(f"sparsegpt_prune: Hessian has shape {tuple(hessian.shape)}, expected ({k}, {k})")
    W = w.detach().double().clone()
    W[:, torch.diag(hessian) == 0] = 0
    U = _inverse_hessian_cholesky(hessian, damp)
    keep = torch.ones(n, k, dtype=torch.bool, device=w.device) if mask is None else mask.clone()
    block_size = max(4, block_size - block_size % 4)
    for b0 in range(0, k, block_size):
        b1 = min(b0 + block_size, k)
        W1, U1 = W[:, b0:b1].clone(), U[b0:b1, b0:b1]
        err = torch.zeros_like(W1)
        for i in range(b1 - b0):
            if mask is None and i % 4 == 0:
                score = W1[:, i : i + 4] ** 2 / torch.diag(U1)[i : i + 4].unsqueeze(0) ** 2
                keep[:, b0 + i : b0 + i + 4] = mask_2_4(score)
            col = W1[:, i]
            q = torch.where(keep[:, b0 + i], col, torch.zeros_like(col))
            e = (col - q) / U1[i, i]
            W1[:, i:] -= e.unsqueeze(1) * U1[i, i:].unsqueeze(0)
            W1[:, i] = q
            err[:, i] = e
        W[:, b0:b1] = W1
        W[:, b1:] -= err @ U[b0:b1, b1:]
    return W.to(w.dtype), keep


def prune_2_4(
    w: torch.Tensor,
    method: str,
    mean_sq: torch.Tensor | None = None,
    hessian: torch.Tensor | None = None,
    mask: torch.Tensor | None = None,
    damp: float = 0.01,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The recipe's pruner: 'magnitude', 'wanda' or 'sparsegpt' -> (pruned W, keep-mask).

    With `mask` given, the same pattern is reused (mask * W, or SparseGPT's compensation for that mask).
    """
    if method == "sparsegpt":
        if hessian is None:
            raise ValueError("pruner 'sparsegpt' needs the calibration Hessian of the layer")
        return sparsegpt_prune(w, hessian, mask=mask, damp=damp)
    if mask is None:
        if method == "magnitude":
            mask = mask_2_4(magnitude_score(w))
        elif method == "wanda":
            if mean_sq is None:
                raise ValueError("pruner 'wanda' needs the calibration mean of x^2 of the layer")
            mask = mask_2_4(wanda_score(w, mean_sq))
        else:
            raise ValueError(f"unknown pruner {method!r}; use 'magnitude', 'wanda' or 'sparsegpt'")
    return w * mask, mask
