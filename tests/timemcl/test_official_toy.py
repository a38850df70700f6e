"""The authors' toy: Brownian windows, the Voronoi-mass estimate of Prop. 5.2, and a short training run."""

import math

import numpy as np
import pytest
import torch
from scipy.stats import norm

from methods.timemcl import official_toy
from methods.timemcl.toy import lloyd_quantizer

CFG = dict(
    n_grid=40,
    window=20,
    n_hypotheses=2,
    width=32,
    lr=3e-3,
    steps=150,
    batch_size=256,
    eps=0.05,
    score_weight=0.5,
    n_reference=4000,
    n_test=2000,
    n_conditions=3,
    n_mass_samples=2000,
    condition_range=1.0,
)


def test_windows_are_brownian():
    """W_start + increments: Var(x_j - x_0) = j dt, and Var(x_0) = E[start] dt for a uniform start."""
    n_grid, window = 41, 11
    y = official_toy.sample_windows(200_000, n_grid, window, torch.Generator().manual_seed(0)).double()
    dt = 1.0 / (n_grid - 1)
    var_incr = (y - y[:, :1]).var(dim=0)
    assert var_incr.numpy() == pytest.approx(np.arange(window) * dt, abs=4e-3)
    mean_start = (n_grid - window) / 2  # start index uniform on 0 .. n_grid - window
    assert float(y[:, 0].var()) == pytest.approx(mean_start * dt, rel=0.02)


def test_voronoi_masses_known_cells():
    """1-D standard normal futures: centres -1, +1 split at 0 (mass 1/2 each); centres 0, 2 split at 1 (Phi(1))."""
    z = np.random.default_rng(0).standard_normal((400_000, 1))
    assert official_toy.voronoi_masses(np.array([[-1.0], [1.0]]), z) == pytest.approx([0.5, 0.5], abs=3e-3)
    assert official_toy.voronoi_masses(np.array([[0.0], [2.0]]), z) == pytest.approx(
        [norm.cdf(1.0), 1 - norm.cdf(1.0)], abs=3e-3
    )


def test_kmeans_reference_two_point_gaussian():
    """The optimal 2-point quantizer of N(0, s^2) is +-s sqrt(2/pi) with distortion s^2 (1 - 2/pi)."""
    s = 1.5
    x = np.random.default_rng(1).standard_normal((40_000, 1)) * s
    c, d = lloyd_quantizer(x, 2, seed=0)
    assert c.ravel() == pytest.approx([-s * math.sqrt(2 / math.pi), s * math.sqrt(2 / math.pi)], rel=0.02)
    assert d == pytest.approx(s * s * (1 - 2 / math.pi), rel=0.03)


def test_short_training_approaches_the_quantizer_and_scores_the_cells():
    """K = 2 heads after 150 steps: distortion near the k-means quantizer's, both heads win, scores near the masses."""
    torch.set_num_threads(1)
    model, _ = official_toy.train_toy(CFG, seed=0, show_progress=False)
    doc = official_toy.evaluate_toy(model, CFG, seed=0)
    assert 0.95 < doc["distortion_ratio"] < 1.3
    assert doc["min_win_rate"] > 0.3  # two heads share the windows (the optimum is 1/2 each by symmetry)
    assert doc["score_mass_gap_mean"] < 0.1
    # the nulls: win rates on the same test windows without the reference, uniform scores 1/K against the
    # same cells (K = 2 symmetric cells: a gap near 0, so this null is weak here), x0 over the window
    assert official_toy.win_rates(model, CFG, seed=0).tolist() == pytest.approx(doc["win_rates"])
    gaps = [max(abs(1 / CFG["n_hypotheses"] - m) for m in masses) for masses in doc["masses"]]
    assert doc["uniform_score_gap_mean"] == pytest.approx(np.mean(gaps))
    assert doc["naive_distortion_ratio"] > doc["distortion_ratio"]  # one point cannot beat two at the optimum
