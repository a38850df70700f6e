"""The plain (Layout-Guidance) and adaptive (Langevin) latent updates."""

import pytest
import torch

from methods.winwinlay.update import adaptive_step, adaptive_weights, plain_step


def _vectors(seed=0, shape=(3, 1, 4, 4)):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(shape, generator=g, dtype=torch.float64) for _ in range(4)]


def test_plain_step_is_layout_guidance_update_in_scheduler_coordinates():
    """Layout-Guidance updates x = z / sqrt(abar) by -loss_scale * grad_x E * sigma^2, sigma^2 = (1-abar)/abar."""
    z, grad_z, _, _ = _vectors()
    abar, scale = 0.3, 30.0
    x = z / abar**0.5
    grad_x = grad_z * abar**0.5  # E(z) = E(sqrt(abar) x)
    x_new = x - scale * grad_x * (1 - abar) / abar
    assert torch.allclose(plain_step(z, grad_z, scale, abar), x_new * abar**0.5)


def test_adaptive_reduces_to_plain_gradient_without_score_and_noise():
    z, score, grad_e, noise = _vectors(1)
    nu, _, xi = adaptive_weights(score, grad_e, noise, 0.06, 100.0, score_weight=0.0)
    out = adaptive_step(z, score, grad_e, noise, 0.06, 100.0, add_noise=False, score_weight=0.0)
    assert torch.allclose(out, z - xi * nu * grad_e)
    # ... which is plain_step with loss_scale (1 - abar) = xi nu, sample by sample
    for i in range(len(z)):
        abar = 0.5
        step = (xi * nu)[i].item() / (1 - abar)
        assert torch.allclose(out[i], plain_step(z[i : i + 1], grad_e[i : i + 1], step, abar)[0])


def test_adaptive_step_signal_to_noise_ratio_and_balance():
    z, score, grad_e, noise = _vectors(2)
    r = 0.06
    nu, drift, xi = adaptive_weights(score, grad_e, noise, r, 1e9)
    for i in range(len(z)):
        # nu balances the energy gradient against the score: ||nu grad E|| = ||s||
        assert (nu[i] * grad_e[i]).norm().item() == pytest.approx(score[i].norm().item())
        # the drift is r times the injected noise in norm
        ratio = (xi[i] * drift[i]).norm() / ((2 * xi[i]).sqrt() * noise[i]).norm()
        assert ratio.item() == pytest.approx(r)
    full = adaptive_step(z, score, grad_e, noise, r, 1e9)
    assert torch.allclose(full, z + xi * drift + (2 * xi).sqrt() * noise)


def test_nu_is_clipped_and_samples_are_independent():
    z, score, grad_e, noise = _vectors(3)
    grad_e[0] *= 1e-9  # vanishing energy gradient: nu would explode
    nu, _, _ = adaptive_weights(score, grad_e, noise, 0.06, 100.0)
    assert nu[0].item() == 100.0 and nu[1].item() < 100.0
    alone = adaptive_step(z[1:2], score[1:2], grad_e[1:2], noise[1:2], 0.06, 100.0)
    batch = adaptive_step(z, score, grad_e, noise, 0.06, 100.0)
    assert torch.allclose(alone[0], batch[1])
