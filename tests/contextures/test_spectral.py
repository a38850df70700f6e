"""Contextures: spectra of hand-made operators, Nystrom identity, the spectral objective's optimum, CCA, tau."""

import numpy as np
import pytest
import torch

from methods.contextures import spectral as S
from methods.contextures.encoder import spectral_loss


def test_spectrum_of_hand_made_operators():
    n = 6
    assert np.allclose(S.spectrum(np.eye(n))["s"], 1.0)  # identity context: all 1
    s = S.spectrum(np.full((n, n), 1.0 / n))["s"]  # independent context
    assert s[0] == pytest.approx(1.0) and np.allclose(s[1:], 0.0, atol=1e-12)
    blocks = np.kron(np.eye(2), np.full((3, 3), 1.0 / 3))  # two clusters
    s = S.spectrum(blocks)["s"]
    assert np.allclose(s[:2], 1.0) and np.allclose(s[2:], 0.0, atol=1e-12)


def test_constant_function_is_the_top_pair_and_nystrom_reproduces_mu_on_the_inputs():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3))
    p = S.knn_context(x, x, 5)
    spec = S.spectrum(p)
    assert spec["s"][0] == pytest.approx(1.0)
    assert np.allclose(np.abs(spec["mu"][:, 0]), 1.0)  # constant singular function
    assert np.allclose(S.extend(p, spec, 4), spec["mu"][:, 1:5], atol=1e-8)  # T nu_i = s_i mu_i


def test_the_spectral_objective_is_minimised_by_the_top_d_singular_functions():
    """Free Phi, Psi tables on a finite problem: minimum = -(s_1^2 + ... + s_d^2), span Phi = span mu_1..mu_d."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(12, 2))
    p = S.rbf_context(x, x, 0.5)
    spec = S.spectrum(p)
    d = 2
    torch.manual_seed(0)
    phi = torch.randn(12, d, dtype=torch.float64, requires_grad=True)
    psi = torch.randn(12, d, dtype=torch.float64, requires_grad=True)
    pt = torch.as_tensor(p)
    opt = torch.optim.LBFGS([phi, psi], max_iter=500, tolerance_grad=1e-12, tolerance_change=1e-15)

    def closure():
        opt.zero_grad()
        loss = spectral_loss(phi, psi, pt)
        loss.backward()
        return loss

    for _ in range(5):
        opt.step(closure)
    loss = spectral_loss(phi, psi, pt).item()
    assert loss == pytest.approx(-(spec["s"][1 : d + 1] ** 2).sum(), rel=1e-6)
    assert S.mean_cca(phi.detach().numpy(), spec["mu"][:, 1 : d + 1]) == pytest.approx(1.0, abs=1e-6)


def test_mean_cca_known_cases():
    rng = np.random.default_rng(2)
    a = rng.normal(size=(2000, 3))
    assert S.mean_cca(a, a @ rng.normal(size=(3, 3)) + 5.0) == pytest.approx(1.0)  # invertible map + shift
    assert S.mean_cca(a, rng.normal(size=(2000, 3))) < 0.08  # independent
    b = np.c_[a[:, :1], rng.normal(size=(2000, 1))]
    assert S.mean_cca(a[:, :2], b) == pytest.approx(0.5, abs=0.05)  # one shared direction of two


def test_tau_against_a_brute_force_reference_with_a_known_minimiser():
    """Two strong directions, then a long flat tail: the gap after s_2 makes d = 2 the minimiser
    (tau_2 = 1/(1 - 0.09) + 1.62/5.22 = 1.409 < tau_3 = 1.427 < ... ; tau_1 = 5.42)."""
    s = np.array([1.0, 0.9, 0.9] + [0.3] * 40)
    s2 = s[1:] ** 2
    ref = {d: 1 / (1 - s2[d]) + s2[:d].sum() / s2.sum() for d in range(1, len(s2))}
    tau, d = S.tau_metric(s, beta=1.0)
    assert d == min(ref, key=ref.get) == 2
    assert tau == pytest.approx(1 / (1 - 0.09) + 1.62 / 5.22)
    # a spectrum that decays without a gap abstains towards beta + 1 = 2 at large d (the paper's remark)
    assert S.tau_metric(np.array([1.0, 0.95, 0.9, 0.3, 0.2, 0.1, 0.05]))[0] == pytest.approx(2.0, abs=0.01)


def test_unknown_context_kind_is_named():
    with pytest.raises(ValueError, match="context kind 'cosine'"):
        S.context_matrix("cosine", np.zeros((2, 2)), np.zeros((2, 2)), 1)
