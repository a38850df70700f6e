"""Cross-attention layout energies: the common energy of Layout-Guidance / BoxDiff and WinWinLay's
non-local energy (common energy + rho * KL to a box-shaped prior).

Conventions: an attention map `attn` has shape (B, K, H, W): K object tokens, non-negative values on an
H x W grid; `mask` has the same shape with 1 on the cells of the token's box. Energies are returned per
sample (B,), averaged over the K objects (as Layout-Guidance's compute_ca_loss averages over objects).
"""
from __future__ import annotations

import torch

EPS = 1e-8


def box_mask(boxes: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """(B, K, H, W) 0/1 masks of fractional boxes (B, K, 4) = (x0, y0, x1, y1) in [0, 1]; the rows
    int(y0 H):int(y1 H) and columns int(x0 W):int(x1 W), as Layout-Guidance's compute_ca_loss builds them."""
    b, k, _ = boxes.shape
    mask = torch.zeros(b, k, height, width, dtype=torch.float32)
    for i in range(b):
        for j in range(k):
            x0, y0, x1, y1 = boxes[i, j].tolist()
            mask[i, j, int(y0 * height):int(y1 * height), int(x0 * width):int(x1 * width)] = 1.0
    return mask


def in_box_mass(attn: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(B, K) fraction of each token's attention that falls in its box."""
    return (attn * mask).sum((-2, -1)) / (attn.sum((-2, -1)) + EPS)


def common_energy(attn: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """E = (1 - sum_box A / sum A)^2 per token, mean over tokens: the energy WinWinLay shows to be biased."""
    return ((1.0 - in_box_mass(attn, mask)) ** 2).mean(-1)


def common_energy_grad(attn: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Closed-form dE_common/dA: -2 (1 - m) (mask - m) / (K sum A). It is proportional to 1/sum A on every
    in-box cell alike, so in logit coordinates (dA/dl = A (...)) cells that already hold attention grow
    fastest: the concentration bias."""
    total = attn.sum((-2, -1), keepdim=True) + EPS
    m = (attn * mask).sum((-2, -1), keepdim=True) / total
    return -2.0 * (1.0 - m) * (mask - m) / (total * attn.shape[1])


def box_prior(boxes: torch.Tensor, height: int, width: int, sigma_frac: float) -> torch.Tensor:
    """(B, K, H, W) non-local prior P_box: a Gaussian centred on the box with sd sigma_frac x box side per axis
    (cell centres on the grid), normalised to sum 1. sigma_frac = 0.35 follows a third-party
    re-implementation (assumed: the paper's body could not be read)."""
    ys = (torch.arange(height, dtype=torch.float32) + 0.5) / height
    xs = (torch.arange(width, dtype=torch.float32) + 0.5) / width
    x0, y0, x1, y1 = boxes.unbind(-1)  # (B, K)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    sx = (sigma_frac * (x1 - x0)).clamp_min(1e-3)
    sy = (sigma_frac * (y1 - y0)).clamp_min(1e-3)
    gx = torch.exp(-0.5 * ((xs[None, None, :] - cx[..., None]) / sx[..., None]) ** 2)  # (B, K, W)
    gy = torch.exp(-0.5 * ((ys[None, None, :] - cy[..., None]) / sy[..., None]) ** 2)  # (B, K, H)
    p = gy[..., :, None] * gx[..., None, :]
    return p / p.sum((-2, -1), keepdim=True)


def normalise_map(attn: torch.Tensor) -> torch.Tensor:
    """A_hat = A / sum A over the grid (a distribution per token)."""
    return attn / (attn.sum((-2, -1), keepdim=True) + EPS)


def kl_to_prior(attn: torch.Tensor, prior: torch.Tensor) -> torch.Tensor:
    """KL(A_hat || P_box) per token (B, K)."""
    a = normalise_map(attn)
    return (a * (torch.log(a + EPS) - torch.log(prior + EPS))).sum((-2, -1))


def kl_to_prior_grad(attn: torch.Tensor, prior: torch.Tensor) -> torch.Tensor:
    """Closed-form dKL(A_hat||P)/dA = (log(A_hat/P) - KL) / sum A (the +1 of d(a log a) cancels since sum A_hat = 1)."""
    total = attn.sum((-2, -1), keepdim=True) + EPS
    a = attn / total
    log_ratio = torch.log(a + EPS) - torch.log(prior + EPS)
    kl = (a * log_ratio).sum((-2, -1), keepdim=True)
    return (log_ratio - kl) / total


def nonlocal_energy(attn: torch.Tensor, mask: torch.Tensor, prior: torch.Tensor, rho: float) -> torch.Tensor:
    """WinWinLay's non-local attention energy: E_common + rho * KL(A_hat || P_box), mean over tokens."""
    return common_energy(attn, mask) + rho * kl_to_prior(attn, prior).mean(-1)


def rho_at(step: int, n_guided: int, rho0: float) -> float:
    """rho decays linearly from rho0 at the first denoising step to 0 after the last guided step (assumed
    from a third-party re-implementation)."""
    return rho0 * max(0.0, 1.0 - step / max(n_guided, 1))
