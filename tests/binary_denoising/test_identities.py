"""The denoising identities (T), (D), Hamming optimality and sufficiency of the sum, by exact enumeration."""

import itertools

import numpy as np
import pytest
import torch

from methods.binary_denoising.mixture import BernoulliMixture
from methods.binary_denoising.noise import (
    flip_probability,
    flip_ratio_denoiser,
    hamming_denoiser,
    hypercube,
    log_q_extended,
    sample_noisy,
    tmf_denoiser,
)


def _random_prior(d, seed):
    g = torch.Generator().manual_seed(seed)
    xs = hypercube(d)
    p = torch.rand(len(xs), generator=g, dtype=torch.float64) ** 3
    return xs.double(), torch.log(p / p.sum())


def _likelihood(ys, xs, alpha):
    """p(y | x) of (N), table (len(ys), len(xs))."""
    return torch.exp(alpha * ys @ xs.T) / (2 * np.cosh(alpha)) ** xs.shape[1]


def _enumerated_posterior_mean(ys, xs, log_p, alpha):
    joint = _likelihood(ys, xs, alpha) * log_p.exp()[None]
    return (joint @ xs) / joint.sum(1, keepdim=True)


@pytest.mark.parametrize("alpha", [0.2, 0.7, 1.5])
def test_tmf_identity_matches_enumeration(alpha):
    xs, log_p = _random_prior(4, seed=1)
    exact = _enumerated_posterior_mean(xs, xs, log_p, alpha)
    assert torch.allclose(tmf_denoiser(xs, xs, log_p, alpha), exact, atol=1e-10)
    log_q = lambda y: log_q_extended(y, xs, log_p, alpha)  # noqa: E731
    assert torch.allclose(flip_ratio_denoiser(xs, log_q, alpha), exact, atol=1e-10)


def test_q_is_a_distribution_on_the_hypercube():
    xs, log_p = _random_prior(4, seed=2)
    assert float(log_q_extended(xs, xs, log_p, 0.6).exp().sum()) == pytest.approx(1.0, abs=1e-12)


def test_sign_of_posterior_mean_minimises_expected_hamming_loss():
    xs, log_p = _random_prior(3, seed=3)
    alpha = 0.5
    joint = _likelihood(xs, xs, alpha) * log_p.exp()[None]
    post = joint / joint.sum(1, keepdim=True)  # (y, x)
    mean = post @ xs
    best = hamming_denoiser(mean)
    for iy in range(len(xs)):
        risks = [(post[iy] * (xs != cand).double().sum(1)).sum() for cand in xs]
        risk_sign = (post[iy] * (xs != best[iy]).double().sum(1)).sum()
        assert float(risk_sign) == pytest.approx(float(min(risks)), abs=1e-12)


def test_posterior_depends_on_measurements_only_through_their_sum():
    xs, log_p = _random_prior(3, seed=4)
    alpha = 0.8
    for y1, y2 in itertools.product(xs[:4], xs[3:7]):
        lik = _likelihood(y1[None], xs, alpha) * _likelihood(y2[None], xs, alpha)
        joint = lik * log_p.exp()[None]
        two = (joint @ xs) / joint.sum()
        h = alpha * (y1 + y2)
        w = torch.softmax(log_p + xs @ h, 0)
        assert torch.allclose(two[0], w @ xs, atol=1e-12)


def test_noise_flips_bits_at_the_stated_rate():
    g = torch.Generator().manual_seed(0)
    x = torch.ones(200_000, 1)
    y = sample_noisy(x, 0.4, g)
    assert float((y != x).float().mean()) == pytest.approx(flip_probability(0.4), abs=4e-3)


def test_mixture_posterior_matches_enumeration_and_monte_carlo():
    g = torch.Generator().manual_seed(5)
    means = torch.rand(3, 5, generator=g, dtype=torch.float64) * 1.6 - 0.8
    mix = BernoulliMixture(weights=torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64), means=means)
    xs = hypercube(5).double()
    log_p = mix.log_prob(xs)
    assert float(log_p.exp().sum()) == pytest.approx(1.0, abs=1e-12)
    alpha = 0.6
    exact = _enumerated_posterior_mean(xs, xs, log_p, alpha)
    assert torch.allclose(mix.posterior_mean(alpha * xs), exact, atol=1e-10)
    assert torch.allclose(mix.log_q(xs, alpha), log_q_extended(xs, xs, log_p, alpha), atol=1e-10)
    # Monte Carlo: self-normalised weights p(y | x) over prior draws, and exact posterior draws
    y = xs[7:8]
    x, _ = mix.sample(200_000, g)
    w = _likelihood(y, x.double(), alpha)[0]
    mc = (w[:, None] * x).sum(0) / w.sum()
    assert torch.allclose(mc, exact[7], atol=0.01)
    draws = mix.sample_posterior((alpha * y).repeat(200_000, 1), g)
    assert torch.allclose(draws.mean(0), exact[7], atol=0.01)
