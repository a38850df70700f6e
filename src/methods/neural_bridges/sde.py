"""Diffusions dX = f(t, X) dt + sigma dW with constant sigma, their linear auxiliary processes and
Euler-Maruyama with reparameterised noise (Section 2 of Yang, van der Meulen, Sommer 2025).

Every process here has a constant diffusion matrix sigma (d x d), so a = sigma sigma^T is constant;
that covers the Brownian, OU and cell-differentiation examples of the paper.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch

Drift = Callable[[float, torch.Tensor], torch.Tensor]  # (t, x (B, d)) -> (B, d)


@dataclass(frozen=True)
class Diffusion:
    """A diffusion dX = f(t, X) dt + sigma dW on R^d with constant sigma."""

    name: str
    drift: Drift
    sigma: torch.Tensor  # (d, d)

    @property
    def dim(self) -> int:
        return self.sigma.shape[0]

    @property
    def a(self) -> torch.Tensor:
        return self.sigma @ self.sigma.T


@dataclass(frozen=True)
class LinearAuxiliary:
    """Linear auxiliary process dX~ = (B X~ + beta) dt + sigma~ dW (Section 3, guided proposals)."""

    B: torch.Tensor  # (d, d)
    beta: torch.Tensor  # (d,)
    sigma: torch.Tensor  # (d, d)

    @property
    def a(self) -> torch.Tensor:
        return self.sigma @ self.sigma.T

    def drift(self, t: float, x: torch.Tensor) -> torch.Tensor:
        return x @ self.B.T + self.beta


def _eye(d: int, s: float) -> torch.Tensor:
    return s * torch.eye(d, dtype=torch.float64)


def brownian(gamma: float, sigma: float) -> Diffusion:
    """Scalar Brownian motion with constant drift gamma: dX = gamma dt + sigma dW."""
    return Diffusion("brownian", lambda t, x: torch.full_like(x, gamma), _eye(1, sigma))


def ornstein_uhlenbeck(gamma: float, mu: float, sigma: float) -> Diffusion:
    """Scalar OU process dX = gamma (mu - X) dt + sigma dW (the paper's OU example)."""
    return Diffusion("ou", lambda t, x: gamma * (mu - x), _eye(1, sigma))


def cell_drift(alpha: float) -> Drift:
    """Cell-differentiation drift f_i = u(x_i) + 1 - u(x_j) - x_i, u(x) = x^4 / (alpha + x^4)."""

    def f(t: float, x: torch.Tensor) -> torch.Tensor:
        x4 = x**4
        u = x4 / (alpha + x4)
        return u + 1.0 - u.flip(-1) - x

    return f


def cell_model(alpha: float, sigma: float) -> Diffusion:
    """The 2-d cell-differentiation model of the paper (alpha = 2^-4 = 1/16 in the paper)."""
    return Diffusion("cell", cell_drift(alpha), _eye(2, sigma))


def driftless_auxiliary(sigma: torch.Tensor) -> LinearAuxiliary:
    """Auxiliary Brownian motion without drift (B = 0, beta = 0): the official OU/Brownian choice."""
    d = sigma.shape[0]
    return LinearAuxiliary(torch.zeros(d, d, dtype=torch.float64), torch.zeros(d, dtype=torch.float64), sigma)


def time_grid(T: float, n_steps: int) -> torch.Tensor:
    """Uniform grid t_0 = 0 < ... < t_N = T (float64)."""
    return torch.linspace(0.0, T, n_steps + 1, dtype=torch.float64)


def brownian_increments(
    batch: int, ts: torch.Tensor, dim: int, gen: torch.Generator, dtype=torch.float32
) -> torch.Tensor:
    """Reparameterised noise: dW_k = sqrt(dt_k) xi_k, xi_k ~ N(0, I); shape (batch, N, dim)."""
    dts = torch.diff(ts).to(dtype)
    xi = torch.randn(batch, len(dts), dim, generator=gen, dtype=dtype)
    return xi * dts.sqrt()[None, :, None]


def euler_maruyama(
    x0: torch.Tensor, ts: torch.Tensor, dW: torch.Tensor, drift: Drift, sigma: torch.Tensor
) -> torch.Tensor:
    """X_{k+1} = X_k + drift(t_k, X_k) dt_k + sigma dW_k; returns the path (B, N+1, d)."""
    B = dW.shape[0]
    x = x0.to(dW.dtype).expand(B, -1)
    sig_t = sigma.to(dW.dtype).T
    noise = dW @ sig_t  # (B, N, d)
    dts = torch.diff(ts).tolist()
    tl = ts.tolist()
    path = [x]
    for k, dt in enumerate(dts):
        x = x + drift(tl[k], x) * dt + noise[:, k]
        path.append(x)
    return torch.stack(path, dim=1)


# ---- closed forms for scalar linear SDEs dX = (b X + c) dt + s dW --------------------------------


def linear_transition(b: float, c: float, s: float, tau: float) -> tuple[float, float, float]:
    """X_{t+tau} | X_t = x ~ N(e^{b tau} x + m, V): returns (e^{b tau}, m, V)."""
    if abs(b) < 1e-12:
        return 1.0, c * tau, s * s * tau
    e = math.exp(b * tau)
    return e, c / b * (e - 1.0), s * s * (math.exp(2 * b * tau) - 1.0) / (2 * b)


def linear_log_density(b: float, c: float, s: float, tau: float, x: float, v: float, eps: float) -> float:
    """log of the density of v = X_tau + N(0, eps^2) given X_0 = x, for the scalar linear SDE."""
    e, m, V = linear_transition(b, c, s, tau)
    var = V + eps * eps
    return -0.5 * (v - e * x - m) ** 2 / var - 0.5 * math.log(2 * math.pi * var)


def linear_bridge_marginal(
    b: float, c: float, s: float, x0: float, v: float, T: float, t: float, eps: float
) -> tuple[float, float]:
    """Mean and variance of X_t given X_0 = x0 and X_T + N(0, eps^2) = v (Gaussian conditioning)."""
    e_t, m_t, V_t = linear_transition(b, c, s, t)
    e_r, m_r, V_r = linear_transition(b, c, s, T - t)
    mean_t = e_t * x0 + m_t
    mean_T = e_r * mean_t + m_r
    var_T = e_r * e_r * V_t + V_r + eps * eps
    cov = V_t * e_r
    return mean_t + cov * (v - mean_T) / var_T, V_t - cov * cov / var_T


def linear_score(b: float, c: float, s: float, tau: float, x: torch.Tensor, v: float, eps: float) -> torch.Tensor:
    """grad_x log p(v | x) for the scalar linear SDE over a horizon tau (the exact bridge's r)."""
    e, m, V = linear_transition(b, c, s, tau)
    return e * (v - e * x - m) / (V + eps * eps)
