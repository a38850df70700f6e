"""Bernoulli noise on {-1, 1}^d and the denoising identities (T), (D) of the package docstring."""

from __future__ import annotations

import itertools

import numpy as np
import torch


def flip_probability(alpha: float) -> float:
    """P(y_i != x_i) under (N): (1 - tanh alpha) / 2."""
    return float((1.0 - np.tanh(alpha)) / 2.0)


def sample_noisy(x: torch.Tensor, alpha: float, generator: torch.Generator | None = None) -> torch.Tensor:
    """One measurement y ~ p(y | x) of (N): each bit kept with probability (1 + tanh alpha) / 2."""
    keep = torch.rand(x.shape, generator=generator) < (1.0 + np.tanh(alpha)) / 2.0
    return torch.where(keep, x, -x)


def hypercube(d: int) -> torch.Tensor:
    """All 2^d points of {-1, 1}^d, shape (2^d, d), in lexicographic order."""
    return torch.tensor(list(itertools.product([-1.0, 1.0], repeat=d)))


def log_q_extended(y: torch.Tensor, xs: torch.Tensor, log_p: torch.Tensor, alpha: float) -> torch.Tensor:
    """log q_alpha(y) of (Q) for any real y (B, d): logsumexp_x [log p(x) + alpha x.y] - d log(2 cosh alpha)."""
    d = xs.shape[1]
    return torch.logsumexp(log_p[None, :] + alpha * y @ xs.T, dim=1) - d * np.log(2 * np.cosh(alpha))


def tmf_denoiser(y: torch.Tensor, xs: torch.Tensor, log_p: torch.Tensor, alpha: float) -> torch.Tensor:
    """(T): E[x | y] = grad_y log q_alpha(y) / alpha, by automatic differentiation of (Q)."""
    y = y.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(log_q_extended(y, xs, log_p, alpha).sum(), y)
    return grad / alpha


def flip_ratio_denoiser(y: torch.Tensor, log_q_fn, alpha: float) -> torch.Tensor:
    """(D): E[x | y] from the discrete score r_i = q(y^(i)) / q(y) on the hypercube (y (B, d) in {-1,1})."""
    t = np.tanh(alpha)
    lq = log_q_fn(y)  # (B,)
    out = torch.empty_like(y)
    for i in range(y.shape[1]):
        flipped = y.clone()
        flipped[:, i] = -flipped[:, i]
        r = torch.exp(log_q_fn(flipped) - lq)
        out[:, i] = y[:, i] * ((1 - r) / (2 * t) + t * (1 + r) / 2)
    return out


def hamming_denoiser(mean: torch.Tensor) -> torch.Tensor:
    """Hamming-loss-optimal denoiser sign(E[x | y]) (ties broken towards +1)."""
    return torch.where(mean >= 0, 1.0, -1.0)
