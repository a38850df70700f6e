"""Sample-quality and mixing metrics."""
from __future__ import annotations

import numpy as np
import torch


def energy_distance(a: torch.Tensor, b: torch.Tensor) -> float:
    """Energy distance 2 E|A-B| - E|A-A'| - E|B-B'| (Euclidean; on {-1,1}^d |u-v| = 2 sqrt(Hamming)),
    normalised by sqrt(d) so that values are comparable across dimensions."""
    def mean_dist(u, v, same):
        dist = torch.cdist(u, v)
        if same:
            n = len(u)
            return float(dist.sum() / (n * (n - 1)))
        return float(dist.mean())

    d = a.shape[1]
    return (2 * mean_dist(a, b, False) - mean_dist(a, a, True) - mean_dist(b, b, True)) / np.sqrt(d)


def integrated_autocorrelation(trace: np.ndarray, max_lag: int | None = None) -> float:
    """tau = 1 + 2 sum_k rho_k over parallel chains, trace (T, C); autocorrelations averaged over
    chains and summed up to the first non-positive one (Geyer-style initial sequence truncation).

    Not arviz.ess: ArviZ's estimator (split chains, between-chain variance, Geyer's initial monotone
    sequence) is a different one. It equals ours on fast-mixing chains and is lower, and closer to the exact
    value, on slowly mixing ones (tests/binary_denoising/test_ess_arviz.py); ours is kept so that the mixing
    claims' numbers stay those of the runs they were stated on."""
    T = trace.shape[0]
    x = trace - trace.mean(0, keepdims=True)
    var = (x * x).mean()
    if var <= 1e-12:
        return float("nan")
    max_lag = max_lag or T // 2
    tau = 1.0
    for k in range(1, max_lag):
        rho = float((x[:-k] * x[k:]).mean() / var)
        if rho <= 0:
            break
        tau += 2 * rho
    return tau


def ess_per_step(trace: np.ndarray) -> float:
    """Effective sample size per step of one chain, 1 / tau (trace (T, C) of a scalar statistic)."""
    return 1.0 / integrated_autocorrelation(trace)


def weight_tv(assignments: torch.Tensor, weights: torch.Tensor) -> float:
    """Total variation between the true mixture weights and the histogram of component assignments."""
    hist = torch.bincount(assignments, minlength=len(weights)).float() / len(assignments)
    return float(0.5 * (hist - weights).abs().sum())


def classifier_score(probs: torch.Tensor) -> float:
    """Inception-score-like exp(E_x KL(p(c|x) || p(c))) from class probabilities (n, C): high when
    every sample is confidently classified and the classes are diverse."""
    marginal = probs.mean(0, keepdim=True)
    kl = (probs * (torch.log(probs + 1e-12) - torch.log(marginal + 1e-12))).sum(1)
    return float(torch.exp(kl.mean()))
