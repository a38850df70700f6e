"""Toy processes: their laws, the analytic Brownian quantizer and the Lloyd reference."""

import math

import numpy as np
import pytest
import torch

from methods.timemcl.toy import (
    TOY_PROCESSES,
    brownian_k2_distortion_continuum,
    conditional_samples,
    lloyd_quantizer,
    optimal_quantizer_brownian_k2,
    quantization_distortion,
    sample_ar,
    sample_brownian,
    sample_brownian_bridge,
    time_grid,
)

torch.set_num_threads(1)


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def test_registry_and_shapes():
    assert set(TOY_PROCESSES) == {"brownian", "bridge", "ar"}
    for name, sampler in TOY_PROCESSES.items():
        x = sampler(7, 11, generator=_gen(0))
        assert x.shape == (7, 11, 1) and x.dtype == torch.float32, name


def test_brownian_and_bridge_covariances():
    n, steps = 20000, 11
    t = time_grid(steps)
    w = sample_brownian(n, steps, _gen(1))[..., 0].double().numpy()
    assert (w[:, 0] == 0).all()
    cov = np.cov(w[:, 1:].T)
    assert np.abs(cov - np.minimum.outer(t[1:], t[1:])).max() < 0.03  # Cov(W_s, W_t) = min(s, t)
    b = sample_brownian_bridge(n, steps, _gen(2))[..., 0].double().numpy()
    assert np.abs(b[:, [0, -1]]).max() < 1e-6  # pinned at both ends
    inner = t[1:-1]
    ref = np.minimum.outer(inner, inner) - np.outer(inner, inner)  # min(s,t) - s t
    assert np.abs(np.cov(b[:, 1:-1].T) - ref).max() < 0.02


def test_conditional_laws():
    steps, P, n = 21, 8, 20000
    t = time_grid(steps)
    past = np.linspace(0.0, 0.6, P)
    bm = conditional_samples("brownian", past, n, steps, _gen(3)).double().numpy()
    assert bm.shape == (n, steps - P)
    assert np.abs(bm.mean(0) - 0.6).max() < 0.03
    assert np.abs(bm.var(0) - (t[P:] - t[P - 1])).max() < 0.03
    br = conditional_samples("bridge", past, n, steps, _gen(4)).double().numpy()
    t0, tt = t[P - 1], t[P:]
    assert np.abs(br.mean(0) - 0.6 * (1 - tt) / (1 - t0)).max() < 0.02  # drifts to 0 at t = 1
    assert np.abs(br.var(0) - (tt - t0) * (1 - tt) / (1 - t0)).max() < 0.02
    assert np.abs(br[:, -1]).max() < 1e-5
    coeffs, sd = (0.5, 0.3), 0.1
    ar = conditional_samples("ar", np.array([1.0, 2.0]), n, 5, _gen(5), coeffs=coeffs, noise_std=sd).double().numpy()
    assert ar[:, 0].mean() == pytest.approx(0.5 * 2.0 + 0.3 * 1.0, abs=0.01)
    assert ar[:, 0].std() == pytest.approx(sd, rel=0.05)
    with pytest.raises(ValueError, match="process='levy'.*brownian, bridge, ar"):
        conditional_samples("levy", past, 2, steps)


def test_ar_is_stationary_after_burn_in():
    x = sample_ar(4000, 30, coeffs=(0.5,), noise_std=1.0, generator=_gen(6))[..., 0].double().numpy()
    assert x.var(0).mean() == pytest.approx(1.0 / (1 - 0.25), rel=0.08)  # AR(1) variance s^2 / (1 - a^2)


def test_analytic_k2_quantizer_matches_lloyd():
    steps, P = 41, 11
    t = time_grid(steps)
    x0 = 0.3
    centers, dist = optimal_quantizer_brownian_k2(t[P:], x0, t[P - 1])
    assert centers.shape == (2, steps - P)
    samples = conditional_samples("brownian", np.full(P, x0), 20000, steps, _gen(7)).double().numpy()
    lloyd_c, lloyd_d = lloyd_quantizer(samples, 2, seed=0)
    assert lloyd_d == pytest.approx(dist, rel=0.03)
    assert quantization_distortion(centers, samples) == pytest.approx(dist, rel=0.03)
    assert np.abs(lloyd_c[0] - centers.min(0)).max() < 0.06 and np.abs(lloyd_c[1] - centers.max(0)).max() < 0.06
    # the 2-point quantizer beats the conditional mean alone (whose distortion is mean_t Var W_t)
    assert dist < (t[P:] - t[P - 1]).mean()


def test_k2_distortion_tends_to_continuum_formula():
    t0 = 0.25
    grid = np.linspace(t0, 1.0, 2001)[1:]
    _, dist = optimal_quantizer_brownian_k2(grid, 0.0, t0)
    assert dist == pytest.approx(brownian_k2_distortion_continuum(1 - t0), rel=2e-3)
    assert brownian_k2_distortion_continuum(1.0) == pytest.approx(0.5 - 8 / math.pi**3)


def test_lloyd_k1_is_the_mean_and_distortion_drops_with_k():
    rng = np.random.default_rng(8)
    x = rng.normal(size=(3000, 4)) * [1.0, 2.0, 0.5, 1.0] + 3.0
    c1, d1 = lloyd_quantizer(x, 1)
    assert np.allclose(c1[0], x.mean(0))
    assert d1 == pytest.approx(x.var(0).mean())
    d = [lloyd_quantizer(x, k, n_iter=50, seed=0)[1] for k in (1, 2, 4, 8)]
    assert all(a > b for a, b in zip(d, d[1:]))


def test_lloyd_two_points_of_a_gaussian():
    x = np.random.default_rng(9).normal(size=(40000, 1))
    c, d = lloyd_quantizer(x, 2, seed=1)
    assert c.ravel() == pytest.approx([-math.sqrt(2 / math.pi), math.sqrt(2 / math.pi)], abs=0.02)
    assert d == pytest.approx(1 - 2 / math.pi, rel=0.02)
