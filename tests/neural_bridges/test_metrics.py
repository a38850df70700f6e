"""The marginal W1 against scipy.stats.wasserstein_distance: the library gives the distance we computed by hand."""

import numpy as np
import torch
from scipy.stats import wasserstein_distance

from methods.neural_bridges.metrics import marginal_w1, wasserstein1


def quantile_w1(a: torch.Tensor, b: torch.Tensor, n_levels: int = 200) -> float:
    """The hand-written W1 the pipeline used before scipy: mean |Q_a(u) - Q_b(u)| over mid-point levels u."""
    u = (torch.arange(n_levels, dtype=torch.float64) + 0.5) / n_levels
    return float((torch.quantile(a.double(), u) - torch.quantile(b.double(), u)).abs().mean())


def test_scipy_equals_the_hand_written_w1_on_a_shift_and_on_two_large_samples():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(5000, generator=g)
    # a shift moves every quantile by the same amount: both give it exactly
    assert abs(wasserstein_distance(x.double().numpy(), (x + 0.3).double().numpy()) - quantile_w1(x, x + 0.3)) < 1e-6
    # 2000 samples each (the tiny scale's sample size): the 200-level quantile grid differs from the exact W1
    # of the empirical distributions by its discretisation only, which skips the outer 1/400 of each tail
    # (1.3e-3 here; at most 2.3e-3 over 30 such draws, against the claims' tolerance of 0.05)
    a, b = torch.randn(2000, generator=g), 0.9 * torch.randn(2000, generator=g) + 0.05
    lib = wasserstein_distance(a.double().numpy(), b.double().numpy())
    assert abs(lib - quantile_w1(a, b)) < 3e-3


def test_wasserstein1_is_the_library_distance():
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(300, generator=g), torch.randn(70, generator=g) * 2
    assert wasserstein1(a, b) == wasserstein_distance(a.double().numpy(), b.double().numpy())


def test_marginal_w1_averages_grid_points_and_coordinates():
    g = torch.Generator().manual_seed(2)
    a, b = torch.randn(100, 5, 2, generator=g), torch.randn(80, 5, 2, generator=g)
    expected = np.mean(
        [
            wasserstein_distance(a[:, k, j].double().numpy(), b[:, k, j].double().numpy())
            for k in (1, 3)
            for j in range(2)
        ]
    )
    assert abs(marginal_w1(a, b, [1, 3]) - expected) < 1e-12
