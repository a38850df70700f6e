"""Backward information filter against the Gaussian closed form of linear auxiliary processes."""

import math

import pytest
import torch

from methods.neural_bridges.filter import backward_filter
from methods.neural_bridges.sde import LinearAuxiliary, linear_log_density, linear_transition, time_grid


def _closed_form_HF(b, c, s, tau, v, eps):
    """H, F of p~(v | t, x) = N(v; e x + m, V + eps^2) for the scalar linear SDE (tau = T - t)."""
    e, m, V = linear_transition(b, c, s, tau)
    var = V + eps * eps
    return e * e / var, e * (v - m) / var


@pytest.mark.parametrize("b,c,s", [(-1.0, 1.0, 0.1), (0.7, -0.3, 0.5), (0.0, 0.0, 0.3)])
def test_filter_matches_closed_form_scalar(b, c, s):
    T, v, eps = 2.0, 0.8, 0.05
    aux = LinearAuxiliary(
        torch.tensor([[b]], dtype=torch.float64),
        torch.tensor([c], dtype=torch.float64),
        torch.tensor([[s]], dtype=torch.float64),
    )
    ts = time_grid(T, 40)
    eye = torch.eye(1, dtype=torch.float64)
    filt = backward_filter(aux, ts, eye, eps**2 * eye, torch.tensor([v], dtype=torch.float64))
    for k in (0, 10, 25, 39, 40):
        H, F = _closed_form_HF(b, c, s, T - float(ts[k]), v, eps)
        assert float(filt.H[k, 0, 0]) == pytest.approx(H, rel=1e-6)
        assert float(filt.F[k, 0]) == pytest.approx(F, rel=1e-6, abs=1e-9)
    x0 = 0.3
    assert filt.log_ptilde(torch.tensor([x0])) == pytest.approx(linear_log_density(b, c, s, T, x0, v, eps), abs=1e-6)


def test_filter_matches_closed_form_2d_coupled():
    """A coupled 2-d auxiliary: compare with exact Gaussian moments by matrix exponentials."""
    B = torch.tensor([[-1.0, 0.4], [0.2, -0.5]], dtype=torch.float64)
    beta = torch.tensor([1.0, -0.5], dtype=torch.float64)
    sig = torch.tensor([[0.3, 0.0], [0.1, 0.2]], dtype=torch.float64)
    aux = LinearAuxiliary(B, beta, sig)
    T, eps = 1.5, 0.01
    v = torch.tensor([0.4, -0.2], dtype=torch.float64)
    ts = time_grid(T, 30)
    eye = torch.eye(2, dtype=torch.float64)
    filt = backward_filter(aux, ts, eye, eps**2 * eye, v, substeps=8)
    k = 7
    tau = T - float(ts[k])
    # moments of X_T | X_t = x: mean Phi x + mu, covariance int_0^tau Phi(s) a Phi(s)^T ds (fine quadrature)
    Phi = torch.linalg.matrix_exp(B * tau)
    ss = torch.linspace(0, tau, 4001, dtype=torch.float64)
    Phis = torch.linalg.matrix_exp(B[None] * ss[:, None, None])
    cov = torch.trapezoid(Phis @ aux.a @ Phis.transpose(1, 2), ss, dim=0) + eps**2 * eye
    mu = torch.trapezoid(Phis @ beta, ss, dim=0)
    M = torch.linalg.inv(cov)
    H = Phi.T @ M @ Phi
    F = Phi.T @ M @ (v - mu)
    assert torch.allclose(filt.H[k], H, rtol=1e-5)
    assert torch.allclose(filt.F[k], F, rtol=1e-5)
    x0 = torch.tensor([0.1, 0.2], dtype=torch.float64)
    Phi0 = torch.linalg.matrix_exp(B * T)
    # log p~ at t = 0 from the filter equals the Gaussian log density
    ss0 = torch.linspace(0, T, 4001, dtype=torch.float64)
    P0 = torch.linalg.matrix_exp(B[None] * ss0[:, None, None])
    cov0 = torch.trapezoid(P0 @ aux.a @ P0.transpose(1, 2), ss0, dim=0) + eps**2 * eye
    mean0 = Phi0 @ x0 + torch.trapezoid(P0 @ beta, ss0, dim=0)
    ref = torch.distributions.MultivariateNormal(mean0, cov0).log_prob(v)
    assert filt.log_ptilde(x0) == pytest.approx(float(ref), abs=1e-5)
    assert math.isfinite(filt.log_ptilde(x0))
