"""Loss gradients, the logistic loss's minimiser, and that a trained denoiser approaches E[x | h]."""

import numpy as np
import pytest
import torch

from methods.binary_denoising.mixture import BernoulliMixture
from methods.binary_denoising.models import (
    build_denoiser,
    denoiser_mean,
    expected_loss_minimiser,
    logistic_loss,
    logistic_loss_grad,
    noisy_natural_parameter,
    train_denoiser,
)


def test_logistic_loss_gradient_matches_autograd_and_finite_differences():
    g = torch.Generator().manual_seed(0)
    f = torch.randn(5, 7, generator=g, dtype=torch.float64, requires_grad=True)
    x = torch.where(torch.rand(5, 7, generator=g) < 0.5, 1.0, -1.0).double()
    (auto,) = torch.autograd.grad(logistic_loss(f, x), f)
    assert torch.allclose(auto, logistic_loss_grad(f.detach(), x), atol=1e-12)
    assert torch.autograd.gradcheck(lambda z: logistic_loss(z, x), (f,))


@pytest.mark.parametrize("mean", [-0.7, 0.0, 0.4, 0.95])
def test_expected_loss_is_minimised_at_the_posterior_logit(mean):
    """E over x in {-1,1} with E[x] = mean of the loss; its minimiser gives m = tanh(f/2) = mean."""
    f = torch.tensor([float(expected_loss_minimiser(np.array(mean)))], dtype=torch.float64, requires_grad=True)
    p_plus = (1 + mean) / 2
    risk = p_plus * logistic_loss(f, torch.ones(1, dtype=torch.float64)) + (1 - p_plus) * logistic_loss(
        f, -torch.ones(1, dtype=torch.float64)
    )
    (grad,) = torch.autograd.grad(risk, f)
    assert abs(float(grad)) < 1e-10
    assert float(denoiser_mean(f.detach())) == pytest.approx(mean, abs=1e-10)


def test_networks_map_h_to_per_bit_logits():
    h = torch.randn(3, 16)
    for arch, cfg in (("mlp", {"hidden": 8, "layers": 2}), ("cnn", {"channels": 4, "layers": 2})):
        assert build_denoiser(arch, 16, cfg)(h).shape == (3, 16)
    with pytest.raises(AssertionError, match="square"):
        build_denoiser("cnn", 15, {"channels": 4, "layers": 1})


def test_natural_parameter_sums_k_measurements():
    g = torch.Generator().manual_seed(1)
    x = torch.ones(4000, 6)
    h = noisy_natural_parameter(x, [0.5], 3, g)
    sums = (h / 0.5).round()
    assert float(sums.abs().max()) <= 3
    parity = sums.remainder(2)  # every bit of a row sums the same number k of +-1 values
    assert bool((parity == parity[:, :1]).all())
    assert 0.5 < float((parity[:, 0] == 1).float().mean()) < 0.85  # k in {1, 3} w.p. 2/3


def test_trained_mlp_approaches_the_analytic_denoiser():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(2)
    mix = BernoulliMixture(weights=torch.tensor([0.6, 0.4]), means=torch.tensor([[0.8] * 6, [-0.8] * 6]))
    x, _ = mix.sample(3000, g)
    net = build_denoiser("mlp", 6, {"hidden": 32, "layers": 2})
    train_denoiser(net, x, [0.5], 2, steps=400, batch_size=128, lr=5e-3, generator=g)
    h = noisy_natural_parameter(mix.sample(2000, g)[0], [0.5], 2, g)
    with torch.no_grad():
        err = float(((denoiser_mean(net(h)) - mix.posterior_mean(h)) ** 2).mean())
    naive = float(((torch.tanh(h) - mix.posterior_mean(h)) ** 2).mean())
    assert err < 0.1 * naive
