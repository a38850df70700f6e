"""Latent updates during guided denoising: the plain gradient step of Layout-Guidance and WinWinLay's
adaptive Langevin update. All norms are per sample (over every dimension but the first)."""

from __future__ import annotations

import torch


def _norm(x: torch.Tensor) -> torch.Tensor:
    return x.flatten(1).norm(dim=1).view(-1, *([1] * (x.dim() - 1)))


def plain_step(z: torch.Tensor, grad_e: torch.Tensor, loss_scale: float, alpha_bar: float) -> torch.Tensor:
    """Layout-Guidance: x <- x - grad(loss_scale E) sigma^2 in the scheduler's x = z / sqrt(alpha_bar), sigma^2 =
    (1 - alpha_bar) / alpha_bar; in z coordinates z <- z - loss_scale (1 - alpha_bar) grad_z E."""
    return z - loss_scale * (1.0 - alpha_bar) * grad_e


def adaptive_weights(
    score: torch.Tensor, grad_e: torch.Tensor, noise: torch.Tensor, snr: float, nu_max: float, score_weight: float = 1.0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """nu = ||s|| / ||grad E|| (clipped at nu_max), the drift g = w s - nu grad E and the step
    xi = 2 (r ||eta|| / ||g||)^2 that makes ||xi g|| / ||sqrt(2 xi) eta|| = r (the Langevin corrector's
    signal-to-noise rule of Song et al. 2021, which the WinWinLay update adopts)."""
    nu = (_norm(score) / (_norm(grad_e) + 1e-12)).clamp(max=nu_max)
    drift = score_weight * score - nu * grad_e
    xi = 2.0 * (snr * _norm(noise) / (_norm(drift) + 1e-12)) ** 2
    return nu, drift, xi


def adaptive_step(
    z: torch.Tensor,
    score: torch.Tensor,
    grad_e: torch.Tensor,
    noise: torch.Tensor,
    snr: float,
    nu_max: float,
    add_noise: bool = True,
    score_weight: float = 1.0,
) -> torch.Tensor:
    """WinWinLay adaptive update: z <- z + xi (s - nu grad E) + sqrt(2 xi) eta, s = grad log p_t(z) the model's
    score. With score_weight = 0 and no noise it is a plain gradient step of size xi nu."""
    _, drift, xi = adaptive_weights(score, grad_e, noise, snr, nu_max, score_weight)
    z = z + xi * drift
    if add_noise:
        z = z + (2.0 * xi).sqrt() * noise
    return z
