"""Forecast metrics of paper Sec. 5: distortion, CRPS / CRPS-sum of a weighted discrete forecast, RMSE.

Shapes: N windows, K hypotheses (or samples), H horizon, D dims. Arrays or tensors in, floats out.
A forecast is K trajectories x_k with weights w_k (>= 0, summing to 1 per window):
TimeMCL's hypotheses weighted by their normalised scores, K samples of DeepAR weighted 1/K.
"""

from __future__ import annotations

import numpy as np


def _np(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def _check(hyps: np.ndarray, target: np.ndarray, weights: np.ndarray | None = None) -> None:
    ok = hyps.ndim == 4 and target.ndim == 3 and hyps.shape[0] == target.shape[0] and hyps.shape[2:] == target.shape[1:]
    assert ok, f"expected hyps (N,K,H,D) and target (N,H,D), got {hyps.shape}, {target.shape}"
    if weights is not None:
        assert weights.shape == hyps.shape[:2], f"weights {weights.shape} should be (N, K) = {hyps.shape[:2]}"
        assert np.allclose(weights.sum(axis=1), 1.0, atol=1e-5), "weights must sum to 1 over hypotheses"


def per_window_min_rmse(hyps, target) -> np.ndarray:
    """min_k sqrt(sum_d mean_t (x_k - y)^2) for each window: (N,).

    The authors' D_2 (official `distorsion` / personnalized_evaluator): the squared error is averaged
    over the horizon and *summed* over the dimensions inside the square root, then the minimum over
    hypotheses is taken per window.
    """
    hyps, target = _np(hyps), _np(target)
    _check(hyps, target)
    rmse = np.sqrt(((hyps - target[:, None]) ** 2).mean(axis=2).sum(axis=2))  # (N, K)
    return rmse.min(axis=1)


def distortion(hyps, target) -> float:
    """D_2 = (1/N) sum_i min_k sqrt(sum_d (1/H) sum_t (x - x_hat)^2): the quantization error (paper Sec. 5)."""
    return float(per_window_min_rmse(hyps, target).mean())


def winners(hyps, target) -> np.ndarray:
    """Index of the best hypothesis (lowest squared error) per window: (N,)."""
    hyps, target = _np(hyps), _np(target)
    _check(hyps, target)
    return ((hyps - target[:, None]) ** 2).mean(axis=(2, 3)).argmin(axis=1)


def total_variation(trajectories) -> float:
    """Mean total variation sum_t |x_{t+1} - x_t| of trajectories (N, K, H, D), averaged over N, K and D.

    The smoothness measure of the paper's smoothness comparison (hypotheses vs samples).
    """
    x = _np(trajectories)
    assert x.ndim == 4, f"expected trajectories (N, K, H, D), got {x.shape}"
    return float(np.abs(np.diff(x, axis=2)).sum(axis=2).mean())


def crps_weighted_elementwise(samples, weights, target) -> np.ndarray:
    """Exact CRPS of sum_i w_i delta_{x_i} at y, for every leading index.

    CRPS = sum_i w_i |x_i - y| - 1/2 sum_ij w_i w_j |x_i - x_j| (Gneiting & Raftery 2007, kernel form).
    samples (..., K), weights (..., K), target (...) -> (...). The pair term uses the sorted form
    sum_ij w_i w_j |x_i - x_j| = 2 sum_j w_(j) x_(j) (W_(j-1) + W_(j) - W_(K)), W the cumulative weights,
    which is O(K log K) instead of O(K^2).
    """
    x, w, y = _np(samples), _np(weights), _np(target)
    w = np.broadcast_to(w, x.shape)
    order = np.argsort(x, axis=-1)
    xs, ws = np.take_along_axis(x, order, -1), np.take_along_axis(w, order, -1)
    cum = np.cumsum(ws, axis=-1)  # W_(j)
    pair = 2.0 * (ws * xs * (cum - ws + cum - cum[..., -1:])).sum(axis=-1)
    return (w * np.abs(x - y[..., None])).sum(axis=-1) - 0.5 * pair


def weighted_crps(samples, weights, target) -> float:
    """Marginal CRPS per dim and step, normalised: sum CRPS / sum |y| (GluonTS 'mean_wQuantileLoss' convention)."""
    x, w, y = _np(samples), _np(weights), _np(target)
    _check(x, y, w)
    xs = np.moveaxis(x, 1, -1)  # (N, H, D, K)
    crps = crps_weighted_elementwise(xs, w[:, None, None, :], y)  # (N, H, D)
    return float(crps.sum() / np.abs(y).sum())


def weighted_crps_sum(samples, weights, target) -> float:
    """CRPS-sum (paper Sec. 5, TimeGrad convention): CRPS of the sum over dims, sum over windows and steps
    divided by sum |sum_d y|.

    GluonTS approximates this CRPS by the weighted quantile loss at 19 levels and the authors
    feed it 1000 hypotheses resampled by score; the exact formula here is the limit of both.
    """
    x, w, y = _np(samples), _np(weights), _np(target)
    _check(x, y, w)
    xs = np.moveaxis(x.sum(axis=3), 1, -1)  # (N, H, K)
    ys = y.sum(axis=2)  # (N, H)
    crps = crps_weighted_elementwise(xs, w[:, None, :], ys)  # (N, H)
    return float(crps.sum() / np.abs(ys).sum())


def crps_empirical(samples, target) -> float:
    """Marginal normalised CRPS of an equally weighted ensemble samples (N, S, H, D)."""
    x = _np(samples)
    return weighted_crps(x, np.full(x.shape[:2], 1.0 / x.shape[1]), target)


def mixture_rmse(hyps, weights, target) -> float:
    """RMSE over all windows, steps and dims of the weighted mean forecast sum_k w_k x_k."""
    x, w, y = _np(hyps), _np(weights), _np(target)
    _check(x, y, w)
    mean = (w[:, :, None, None] * x).sum(axis=1)  # (N, H, D)
    return float(np.sqrt(((mean - y) ** 2).mean()))
