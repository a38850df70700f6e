"""Backward information filter of a linear auxiliary process (guided proposals, Section 3; the
official code's `bif.py`, equation type "uLM").

Observation v = L X_T + N(0, Sigma). For the auxiliary dX~ = (B X~ + beta) dt + sigma~ dW the
transition density p~(v | t, x) = N(v; L(t) x + u(t), M^dagger(t)) with, integrated from T to 0,

    dL/dt = -L B,   dM^dagger/dt = -L a~ L^T,   du/dt = -L beta,
    L(T) = L,       M^dagger(T) = Sigma,        u(T) = 0,

and H(t) = L(t)^T M(t) L(t), F(t) = L(t)^T M(t) (v - u(t)), M = (M^dagger)^{-1}, so that
r~(t, x) = grad_x log p~(v | t, x) = F(t) - H(t) x. We integrate in tau = T - t with classical RK4
(the official code uses Dopri5); the tests compare with the Gaussian closed form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .sde import LinearAuxiliary


@dataclass(frozen=True)
class FilterGrid:
    """H(t_k), F(t_k) on the simulation grid, and log p~(v | 0, x0)'s ingredients at t = 0."""

    ts: torch.Tensor  # (N+1,)
    H: torch.Tensor  # (N+1, d, d)
    F: torch.Tensor  # (N+1, d)
    L0: torch.Tensor  # (m, d)
    Mdag0: torch.Tensor  # (m, m)
    u0: torch.Tensor  # (m,)
    v: torch.Tensor  # (m,)

    def log_ptilde(self, x0: torch.Tensor) -> float:
        """log p~(v | 0, x0) = log N(v; L(0) x0 + u(0), M^dagger(0))."""
        r = self.v - self.u0 - self.L0 @ x0.to(torch.float64)
        m = len(r)
        quad = r @ torch.linalg.solve(self.Mdag0, r)
        _, logdet = torch.linalg.slogdet(self.Mdag0)
        return float(-0.5 * quad - 0.5 * logdet - 0.5 * m * math.log(2 * math.pi))


def _rhs(state, aux: LinearAuxiliary):
    """Right-hand side in tau = T - t: (dL, dM^dagger, du)/dtau = (L B, L a~ L^T, L beta)."""
    L, _, _ = state
    return L @ aux.B, L @ aux.a @ L.T, L @ aux.beta


def _rk4(state, h: float, aux: LinearAuxiliary):
    def add(s, k, c):
        return tuple(si + c * ki for si, ki in zip(s, k))

    k1 = _rhs(state, aux)
    k2 = _rhs(add(state, k1, h / 2), aux)
    k3 = _rhs(add(state, k2, h / 2), aux)
    k4 = _rhs(add(state, k3, h), aux)
    return tuple(s + h / 6 * (a + 2 * b + 2 * c + d) for s, a, b, c, d in zip(state, k1, k2, k3, k4))


def backward_filter(
    aux: LinearAuxiliary, ts: torch.Tensor, L_obs: torch.Tensor, Sigma: torch.Tensor, v: torch.Tensor, substeps: int = 4
) -> FilterGrid:
    """Integrate the uLM equations from t = T down to 0 on `ts` (RK4, `substeps` per interval)."""
    L_obs, Sigma, v = (z.to(torch.float64) for z in (L_obs, Sigma, v))
    n = len(ts)
    state = (L_obs.clone(), Sigma.clone(), torch.zeros(L_obs.shape[0], dtype=torch.float64))
    states = [None] * n
    states[-1] = state
    for k in range(n - 1, 0, -1):
        h = float(ts[k] - ts[k - 1]) / substeps
        for _ in range(substeps):
            state = _rk4(state, h, aux)
        states[k - 1] = state
    Ls = torch.stack([s[0] for s in states])  # (N+1, m, d)
    Ms = torch.linalg.inv(torch.stack([s[1] for s in states]))  # (N+1, m, m)
    us = torch.stack([s[2] for s in states])  # (N+1, m)
    H = Ls.transpose(1, 2) @ Ms @ Ls
    F = (Ls.transpose(1, 2) @ Ms @ (v - us)[..., None])[..., 0]
    return FilterGrid(ts, H, F, states[0][0], states[0][1], states[0][2], v)
