"""Sample-based comparisons of bridge marginals."""

from __future__ import annotations

import numpy as np
import torch
from scipy.stats import wasserstein_distance


def wasserstein1(a: torch.Tensor, b: torch.Tensor) -> float:
    """W1 between two 1-d empirical distributions (scipy.stats.wasserstein_distance: the exact integral of
    |F_a - F_b|; it replaced a 200-level quantile grid, tests/neural_bridges/test_metrics.py)."""
    return float(wasserstein_distance(torch.as_tensor(a).double().numpy(), torch.as_tensor(b).double().numpy()))


def marginal_w1(paths_a: torch.Tensor, paths_b: torch.Tensor, ks: list[int]) -> float:
    """Mean over the grid indices `ks` and the coordinates of the marginal W1; paths (n, N+1, d)."""
    vals = [wasserstein1(paths_a[:, k, j], paths_b[:, k, j]) for k in ks for j in range(paths_a.shape[-1])]
    return float(np.mean(vals))


def weighted_mean_sd(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Self-normalised weighted mean and sd over the first axis; x (n, ...), w (n,)."""
    w = w.double().view(-1, *([1] * (x.dim() - 1)))
    m = (w * x.double()).sum(0)
    return m, (w * (x.double() - m) ** 2).sum(0).sqrt()
