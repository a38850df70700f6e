"""Toy processes of paper Sec. 4 / App. (Brownian motion, Brownian bridge, AR(p)) and their optimal quantizers.

Paths live on a grid of n_steps points t_j = j / (n_steps - 1) on [0, 1]. The model sees the
path up to t0 (the first P points) and predicts the remaining H = n_steps - P points.
Quantizer distortion here is the expected squared error per grid point of the nearest
center, E min_k mean_j (X_j - c_kj)^2 (the quadratic distortion of Sec. 4, discretised).
"""

from __future__ import annotations

import math

import numpy as np
import torch


def time_grid(n_steps: int) -> np.ndarray:
    """The n_steps grid points on [0, 1]."""
    assert n_steps >= 2, f"need at least 2 grid points, got {n_steps}"
    return np.linspace(0.0, 1.0, n_steps)


def _randn(shape, generator: torch.Generator | None) -> torch.Tensor:
    return torch.randn(shape, generator=generator, dtype=torch.float64)


def sample_brownian(n: int, n_steps: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """Standard Brownian motion W on the grid, W_0 = 0: (n, n_steps, 1) float32."""
    dt = 1.0 / (n_steps - 1)
    incr = _randn((n, n_steps - 1), generator) * math.sqrt(dt)
    w = torch.cat([torch.zeros(n, 1, dtype=torch.float64), incr.cumsum(dim=1)], dim=1)
    return w.float().unsqueeze(-1)


def sample_brownian_bridge(n: int, n_steps: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """Brownian bridge B_t = W_t - t W_1, pinned to 0 at t = 0 and t = 1: (n, n_steps, 1) float32."""
    w = sample_brownian(n, n_steps, generator).squeeze(-1).double()
    t = torch.from_numpy(time_grid(n_steps))
    return (w - t * w[:, -1:]).float().unsqueeze(-1)


def _ar_recursion(
    start: torch.Tensor, n_new: int, coeffs, noise_std: float, generator: torch.Generator | None
) -> torch.Tensor:
    """Extend AR(p) paths: start (n, >= p) -> the n_new following values (n, n_new). x_t = sum_i a_i x_{t-i} + noise."""
    p = len(coeffs)
    a = torch.tensor(list(coeffs), dtype=torch.float64)  # a_1 .. a_p
    hist = start[:, -p:].double()  # (n, p), oldest first
    noise = _randn((start.shape[0], n_new), generator) * noise_std
    out = []
    for j in range(n_new):
        x = hist.flip(1) @ a + noise[:, j]  # (n,)
        out.append(x)
        hist = torch.cat([hist[:, 1:], x[:, None]], dim=1)
    return torch.stack(out, dim=1) if out else torch.zeros(start.shape[0], 0, dtype=torch.float64)


def sample_ar(
    n: int,
    n_steps: int,
    coeffs=(0.5, 0.3),
    noise_std: float = 0.1,
    generator: torch.Generator | None = None,
    burn_in: int = 100,
) -> torch.Tensor:
    """AR(p) paths, one value per grid point, started from 0 and run `burn_in` steps first: (n, n_steps, 1)."""
    start = torch.zeros(n, len(coeffs), dtype=torch.float64)
    path = _ar_recursion(start, burn_in + n_steps, coeffs, noise_std, generator)
    return path[:, burn_in:].float().unsqueeze(-1)


TOY_PROCESSES = {
    "brownian": sample_brownian,
    "bridge": sample_brownian_bridge,
    "ar": sample_ar,
}


def conditional_samples(
    process: str,
    past: np.ndarray | torch.Tensor,
    n: int,
    n_steps: int,
    generator: torch.Generator | None = None,
    coeffs=(0.5, 0.3),
    noise_std: float = 0.1,
) -> torch.Tensor:
    """n draws of the future given the observed past (first P grid points): (n, n_steps - P) float32.

    Simulated forward from the past: BM adds independent increments to the last value;
    the bridge uses its Markov transition towards 0 at t = 1,
    B_{t+dt} | B_t = b ~ N(b (1 - dt/(1-t)), dt (1 - t - dt) / (1 - t)); AR(p) runs its recursion
    from the last p values.
    """
    if process not in TOY_PROCESSES:
        raise ValueError(f"process={process!r} unknown; allowed values: {', '.join(TOY_PROCESSES)}")
    past = torch.as_tensor(np.asarray(past, dtype=np.float64)).reshape(-1)
    P = past.numel()
    assert 1 <= P < n_steps, f"the past must have between 1 and n_steps - 1 = {n_steps - 1} points, got {P}"
    H, dt = n_steps - P, 1.0 / (n_steps - 1)
    if process == "ar":
        return _ar_recursion(past.expand(n, P), H, coeffs, noise_std, generator).float()
    x = past[-1].expand(n).clone()
    t = (P - 1) * dt
    out = []
    for _ in range(H):
        z = _randn((n,), generator)
        if process == "brownian":
            x = x + math.sqrt(dt) * z
        else:
            rem = 1.0 - t
            var = max(dt * (rem - dt) / rem, 0.0)
            x = x * (1.0 - dt / rem) + math.sqrt(var) * z
        t += dt
        out.append(x)
    return torch.stack(out, dim=1).float()


def brownian_kl_first_mode(s: np.ndarray, length: float) -> tuple[np.ndarray, float]:
    """First Karhunen-Loeve pair of BM on [0, L]: e_1(s) = sqrt(2/L) sin(pi s / (2L)), lambda_1 = (2L/pi)^2."""
    return math.sqrt(2.0 / length) * np.sin(np.pi * s / (2.0 * length)), (2.0 * length / np.pi) ** 2


def brownian_k2_distortion_continuum(length: float) -> float:
    """Continuous-time distortion (per unit time) of the optimal 2-quantizer of BM on [0, L]: L/2 - 8L/pi^3.

    E||W||^2 = L^2/2, the quantizer removes 2 lambda_1 / pi; divide by L for a per-time average.
    """
    return length / 2.0 - 8.0 * length / np.pi**3


def optimal_quantizer_brownian_k2(t_future: np.ndarray, x_t0: float, t0: float) -> tuple[np.ndarray, float]:
    """Optimal 2-point quantizer of the law of (W_t)_{t in (t0, 1]} given W_t0 = x_t0 (paper Sec. 4 / App.).

    Given W_t0 = x, W_{t0+s} - x is a BM on [0, L], L = 1 - t0. The optimal 2-quantizer of a
    centred Gaussian measure sits on its first principal axis at +-sqrt(2 lambda_1 / pi) e_1
    (the optimal 2-quantizer of N(0, 1) is +-sqrt(2/pi)), so the centers are
    x +- sqrt(lambda_1) sqrt(2/pi) e_1(t - t0).
    Returns centers (2, len(t_future)) and their exact expected distortion on this grid:
    (1/H) [tr S + |q|^2 - 2 sqrt(2/pi) sqrt(q' S q)] with S_ij = min(s_i, s_j) and q the offset,
    because min over +-q of |Z -+ q|^2 = |Z|^2 + |q|^2 - 2 |<Z, q>| and <Z, q> ~ N(0, q' S q).
    For a fine grid it tends to `brownian_k2_distortion_continuum(L)`.
    """
    s = np.asarray(t_future, dtype=np.float64) - t0
    length = 1.0 - t0
    assert length > 0 and (s > 0).all() and (s <= length + 1e-12).all(), "t_future must lie in (t0, 1]"
    e1, lam1 = brownian_kl_first_mode(s, length)
    q = math.sqrt(lam1) * math.sqrt(2.0 / math.pi) * e1  # (H,)
    centers = np.stack([x_t0 + q, x_t0 - q])  # (2, H)
    cov = np.minimum.outer(s, s)  # (H, H)
    d = np.trace(cov) + q @ q - 2.0 * math.sqrt(2.0 / math.pi) * math.sqrt(q @ cov @ q)
    return centers, float(d / len(s))


def quantization_distortion(centers: np.ndarray, samples: np.ndarray) -> float:
    """E min_k mean_j (x_j - c_kj)^2 estimated on samples (N, H) for centers (K, H)."""
    samples = np.asarray(samples, dtype=np.float64)
    centers = np.asarray(centers, dtype=np.float64)
    return float(_sq_dists(samples, centers).min(axis=1).mean() / samples.shape[1])


def _sq_dists(x: np.ndarray, c: np.ndarray) -> np.ndarray:
    """|x_n - c_k|^2 for x (N, H), c (K, H) -> (N, K)."""
    d = (x * x).sum(1)[:, None] - 2.0 * x @ c.T + (c * c).sum(1)[None, :]
    return np.maximum(d, 0.0)


def _kmeans_pp_init(x: np.ndarray, K: int, rng: np.random.Generator) -> np.ndarray:
    centers = [x[rng.integers(len(x))]]
    for _ in range(1, K):
        d = _sq_dists(x, np.stack(centers)).min(axis=1)
        p = d / d.sum() if d.sum() > 0 else None
        centers.append(x[rng.choice(len(x), p=p)])
    return np.stack(centers)


def _lloyd_run(x: np.ndarray, centers: np.ndarray, n_iter: int) -> tuple[np.ndarray, float]:
    """Lloyd iterations until the assignment stops changing (or n_iter); cell means by one matrix product."""
    xx = (x * x).sum(1)
    assign = None
    for _ in range(n_iter):
        d = np.maximum(xx[:, None] - 2.0 * x @ centers.T + (centers * centers).sum(1)[None, :], 0.0)
        new_assign = d.argmin(axis=1)  # (N,)
        if assign is not None and np.array_equal(new_assign, assign):
            break
        assign = new_assign
        counts = np.bincount(assign, minlength=len(centers))
        onehot = np.zeros((len(x), len(centers)))
        onehot[np.arange(len(x)), assign] = 1.0
        sums = onehot.T @ x  # (K, H)
        centers = sums / np.maximum(counts, 1)[:, None]
        for k in np.flatnonzero(counts == 0):  # empty cell: move the center to the worst-served sample
            centers[k] = x[_sq_dists(x, centers).min(axis=1).argmax()]
    return centers, float(_sq_dists(x, centers).min(axis=1).mean() / x.shape[1])


def lloyd_quantizer(
    samples: np.ndarray | torch.Tensor, K: int, n_iter: int = 100, seed: int = 0, n_restarts: int = 5
) -> tuple[np.ndarray, float]:
    """Numerical optimal K-quantizer of the empirical law of `samples` (N, H): Lloyd / k-means, k-means++ starts.

    Keeps the best of `n_restarts` runs. Returns centers (K, H) sorted by their mean value, and
    their distortion E min_k mean_j (x_j - c_kj)^2 on the samples. K = 1 gives the sample mean.
    """
    x = np.asarray(samples, dtype=np.float64)
    assert x.ndim == 2 and len(x) >= K >= 1, f"need samples (N, H) with N >= K >= 1, got {x.shape}, K={K}"
    rng = np.random.default_rng(seed)
    best = None
    for _ in range(n_restarts if K > 1 else 1):
        run = _lloyd_run(x, _kmeans_pp_init(x, K, rng), n_iter)
        if best is None or run[1] < best[1]:
            best = run
    centers, dist = best
    return centers[np.argsort(centers.mean(axis=1))], dist
