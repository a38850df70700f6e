"""Samplers leave q_alpha invariant on tiny d: the chains' transition matrices by exact enumeration."""

import numpy as np
import torch

from methods.binary_denoising.mixture import BernoulliMixture
from methods.binary_denoising.noise import hypercube
from methods.binary_denoising.samplers import (
    langevin_log_prob,
    langevin_step,
    mean_field_two_stage_mean,
    multi_measurement,
    two_stage_step,
)

ALPHA, ETA, D = 0.7, 3.0, 3


def _mixture():
    means = torch.tensor([[0.8, -0.6, 0.7], [-0.7, 0.5, -0.8]], dtype=torch.float64)
    return BernoulliMixture(weights=torch.tensor([0.65, 0.35], dtype=torch.float64), means=means)


def _likelihood(ys, xs, alpha):
    return torch.exp(alpha * ys @ xs.T) / (2 * np.cosh(alpha)) ** xs.shape[1]


def _langevin_mh_kernel(mix, ys):
    n = len(ys)
    log_q = mix.log_q(ys, ALPHA)
    P = torch.zeros(n, n, dtype=torch.float64)
    s = torch.zeros(1, D, dtype=torch.float64)
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            fwd = langevin_log_prob(ys[i : i + 1], ys[j : j + 1], mix.posterior_mean, ALPHA, ETA, s)
            bwd = langevin_log_prob(ys[j : j + 1], ys[i : i + 1], mix.posterior_mean, ALPHA, ETA, s)
            P[i, j] = fwd.exp() * torch.clamp((log_q[j] - log_q[i] + bwd - fwd).exp(), max=1.0)
        P[i, i] = 1 - P[i].sum()
    return P, log_q.exp()


def test_mh_langevin_kernel_leaves_q_invariant_and_matches_the_code():
    mix, ys = _mixture(), hypercube(D).double()
    P, q = _langevin_mh_kernel(mix, ys)
    assert torch.allclose(q @ P, q, atol=1e-12)
    g = torch.Generator().manual_seed(0)
    start = ys[2:3].repeat(40_000, 1)
    out = langevin_step(start, mix.posterior_mean, ALPHA, ETA, log_target=lambda y: mix.log_q(y, ALPHA), generator=g)
    idx = ((out > 0).long() * (2 ** torch.arange(D - 1, -1, -1))).sum(1)
    freq = torch.bincount(idx, minlength=len(ys)).double() / len(out)
    assert float((freq - P[2]).abs().sum() / 2) < 0.02


def test_exact_two_stage_kernel_leaves_q_invariant_and_matches_the_code():
    mix, ys = _mixture(), hypercube(D).double()
    joint = _likelihood(ys, ys, ALPHA) * mix.log_prob(ys).exp()[None]  # (y, x)
    post = joint / joint.sum(1, keepdim=True)
    P = post @ _likelihood(ys, ys, ALPHA).T  # sum_x p(x|y) p(y'|x)
    q = mix.log_q(ys, ALPHA).exp()
    assert torch.allclose(P.sum(1), torch.ones(len(ys), dtype=torch.float64), atol=1e-12)
    assert torch.allclose(q @ P, q, atol=1e-12)
    g = torch.Generator().manual_seed(1)
    start = ys[5:6].repeat(40_000, 1)
    out = two_stage_step(start, ALPHA, posterior_sampler=lambda h: mix.sample_posterior(h, g), generator=g)
    idx = ((out > 0).long() * (2 ** torch.arange(D - 1, -1, -1))).sum(1)
    freq = torch.bincount(idx, minlength=len(ys)).double() / len(out)
    assert float((freq - P[5]).abs().sum() / 2) < 0.02


def test_mean_field_two_stage_is_exact_for_a_product_prior():
    prod = BernoulliMixture(
        weights=torch.ones(1, dtype=torch.float64), means=torch.tensor([[0.6, -0.3, 0.9]], dtype=torch.float64)
    )
    ys = hypercube(D).double()
    s = torch.zeros_like(ys)
    mean = mean_field_two_stage_mean(ys, ALPHA, prod.posterior_mean, s)  # (y, d)
    P = torch.stack([((1 + ys[None, :, :] * mean[i][None, None, :]) / 2).prod(-1)[0] for i in range(len(ys))])
    q = prod.log_q(ys, ALPHA).exp()
    assert torch.allclose(q @ P, q, atol=1e-12)
    g = torch.Generator().manual_seed(2)
    out = two_stage_step(ys[3:4].repeat(40_000, 1), ALPHA, denoiser=prod.posterior_mean, generator=g)
    assert torch.allclose(out.mean(0), mean[3], atol=0.02)


def test_multi_measurement_returns_binary_samples_for_every_m():
    mix = _mixture()
    g = torch.Generator().manual_seed(3)
    step = lambda y, s: two_stage_step(y.double(), ALPHA, s=s.double(), denoiser=mix.posterior_mean, generator=g)  # noqa: E731
    out = multi_measurement(50, D, ALPHA, 3, 2, step, lambda h: mix.posterior_mean(h.double()), g)
    assert sorted(out) == [1, 2, 3]
    assert all(set(v.unique().tolist()) <= {-1.0, 1.0} and v.shape == (50, D) for v in out.values())


def test_equal_budget_null_runs_the_method_sampler_for_as_many_steps():
    """The one-measurement null of the multi-measurement claims gets m_max * steps_per_measurement sampler steps
    (= denoiser evaluations), the same as m_max measurements."""
    from methods.binary_denoising.experiments import equal_budget_one_measurement

    calls = {"method": 0, "null": 0}

    def counting(key):
        def step(y, s):
            calls[key] += 1
            return y

        return step

    den = lambda h: torch.tanh(h)  # noqa: E731
    multi_measurement(8, 5, 0.5, 6, 15, counting("method"), den, torch.Generator().manual_seed(0))
    out = equal_budget_one_measurement(8, 5, 0.5, 6, 15, counting("null"), den, torch.Generator().manual_seed(0))
    assert calls["method"] == calls["null"] == 90
    assert out.shape == (8, 5) and set(out.unique().tolist()) <= {-1.0, 1.0}


def test_product_of_marginals_matches_the_training_means():
    from methods.binary_denoising.experiments import product_of_marginals

    g = torch.Generator().manual_seed(0)
    x = torch.where(torch.rand(500, 6, generator=g) < torch.tensor([0.1, 0.3, 0.5, 0.7, 0.9, 1.0]), 1.0, -1.0)
    out = product_of_marginals(20000, x, g)
    assert set(out.unique().tolist()) <= {-1.0, 1.0}
    assert torch.allclose(out.mean(0), x.mean(0), atol=0.03)
