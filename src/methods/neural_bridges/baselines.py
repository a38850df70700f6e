"""Baselines of the paper's comparisons (Section 5): guided proposals with importance weights,
guided proposals inside preconditioned Crank-Nicolson MCMC, the score-matching bridge of Heng et al.
(2022) trained on forward samples, and brute-force forward simulation with endpoint conditioning.
"""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np
import torch

from .bridges import (
    BridgeProblem,
    EnsembleMLP,
    TrainConfig,
    increments_per_seed,
    simulate_bridge,
    simulate_forward,
    train_ensemble,
)

# ---- importance sampling with the guided proposal --------------------------------------------


def importance_weights(ll: torch.Tensor) -> torch.Tensor:
    """Self-normalised weights w_i = exp(int G dt) / sum_j exp(int G dt) along the last axis
    (dP*/dP° = exp(int G dt) p~/p; the constant cancels)."""
    return torch.softmax(ll.double(), dim=-1)


def effective_sample_size(ll: torch.Tensor) -> torch.Tensor:
    """ESS = 1 / sum_i w_i^2 of the self-normalised weights (last axis)."""
    w = importance_weights(ll)
    return 1.0 / (w * w).sum(-1)


def log_mean_exp(ll: torch.Tensor) -> torch.Tensor:
    """log E[exp(int G dt)] = log p - log p~ estimated from guided paths (last axis)."""
    return torch.logsumexp(ll.double(), -1) - math.log(ll.shape[-1])


# ---- preconditioned Crank-Nicolson on the driving noise ------------------------------------------


def pcn(
    z0: torch.Tensor,
    log_lik: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
    prior_sample: Callable[[], torch.Tensor],
    eta: float,
    n_iters: int,
    burn_in: int,
    thin: int,
    uniform: Callable[[tuple], torch.Tensor],
):
    """pCN MCMC for a target pi(z) ∝ N(z; 0, C) exp(log_lik(z)), every leading index a chain.

    Proposal z' = eta z + sqrt(1 - eta^2) xi, xi ~ N(0, C) (reversible w.r.t. the prior), accepted
    with probability min(1, exp(ll(z') - ll(z))). log_lik(z) returns (ll (chains,), state); the
    states after burn-in, every `thin` iterations, are stacked on a new axis 1. Returns
    (kept states (chains, n_kept, ...), acceptance rate after burn-in per chain, wall time of each
    iteration). `uniform(shape)` draws the U(0, 1) variables of the accept step.
    """
    z = z0
    ll, state = log_lik(z)
    kept, accepted = [], torch.zeros(ll.shape, dtype=torch.float64, device=ll.device)
    c = math.sqrt(1.0 - eta * eta)
    times = []
    for it in range(1, n_iters + 1):
        t0 = time.perf_counter()
        z_new = eta * z + c * prior_sample()
        ll_new, state_new = log_lik(z_new)
        log_u = torch.log(uniform(ll.shape)).to(ll.device)
        acc = log_u < (ll_new - ll).double()
        z = torch.where(acc.view(-1, *([1] * (z.dim() - 1))), z_new, z)
        ll = torch.where(acc, ll_new, ll)
        state = torch.where(acc.view(-1, *([1] * (state.dim() - 1))), state_new, state)
        if it > burn_in:
            accepted += acc
            if (it - burn_in) % thin == 0:
                kept.append(state.clone())
        synchronize(z.device)
        times.append(time.perf_counter() - t0)
    return torch.stack(kept, 1).cpu(), (accepted / max(n_iters - burn_in, 1)).cpu(), np.array(times)


def synchronize(device: torch.device) -> None:
    """Wait for the device's queued kernels (CUDA runs asynchronously), so a wall-clock time covers the work."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@torch.no_grad()
def pcn_guided_bridge(
    problem: BridgeProblem,
    n_chains: int,
    eta: float,
    n_iters: int,
    burn_in: int,
    thin: int,
    gens: list[torch.Generator],
):
    """pCN on the Wiener increments of the guided proposal (the official baseline), n_chains chains
    per seed, all seeds in one batch: dW' = eta dW + sqrt(1 - eta^2) dZ, accepted with probability
    exp(ll' - ll), ll = int G dt. Returns (kept paths (S, n_chains * n_kept, N+1, d), acceptance
    rate per seed, wall time of each iteration)."""
    S = len(gens)

    def draw():
        return increments_per_seed(gens, n_chains, problem).flatten(0, 1)

    def uniform(shape):
        return torch.stack([torch.rand(n_chains, generator=g, dtype=torch.float64) for g in gens]).flatten()

    def log_lik(dW):
        path, ll, _ = simulate_bridge(problem, dW)
        return ll, path

    paths, acc, times = pcn(draw(), log_lik, draw, eta, n_iters, burn_in, thin, uniform)
    paths = paths.view(S, n_chains, *paths.shape[1:]).flatten(1, 2)
    return paths, acc.view(S, n_chains).mean(1), times


# ---- score-matching bridge (Heng, De Bortoli, Doucet, Thornton 2022) ---------------------------


def score_targets(problem: BridgeProblem, path: torch.Tensor) -> torch.Tensor:
    """Denoising score-matching targets of the Euler transitions:
    g_k = grad_{x_k} log N(x_k; x_{k-1} + f(t_{k-1}, x_{k-1}) dt, a dt) = -a^{-1}(x_k - x_{k-1} - f dt)/dt,
    premultiplied by sigma^T (the network predicts sigma^T grad log p, like theta). (..., N, d)."""
    dt = torch.tensor(problem.dts, dtype=path.dtype, device=path.device)[:, None]
    t_prev = problem.ts[:-1].to(path.dtype)
    f_prev = torch.stack([problem.diffusion.drift(float(t), path[..., k, :]) for k, t in enumerate(t_prev)], -2)
    resid = path[..., 1:, :] - path[..., :-1, :] - f_prev * dt  # sigma dW_k
    sig_inv = torch.linalg.inv(problem.sigma32)
    return -(resid @ sig_inv.T) / dt  # sigma^T a^{-1} r = sigma^{-1} r


def train_score_bridge(
    problem: BridgeProblem,
    net: EnsembleMLP,
    cfg: TrainConfig,
    gens: list[torch.Generator],
    log: Callable[[str], None] = lambda s: None,
) -> np.ndarray:
    """Fit n_theta(t_k, X_k) ≈ sigma^T grad log p(t_k, X_k | x0) on forward paths from x0 (Heng et al.'s
    loss: sum_k dt |s(t_k, X_k) - g_k|_a^2 / 2, averaged over the batch); the same iterations and
    paths per iteration as the neural bridge."""
    S = len(gens)
    t_pts = problem.ts[1:].to(problem.device, torch.float32)
    dt = torch.tensor(problem.dts, dtype=torch.float32, device=problem.device)[:, None]

    def loss_fn(it):
        with torch.no_grad():
            dW = increments_per_seed(gens, cfg.batch, problem)
            path = simulate_forward(problem, dW)  # (S, B, N+1, d)
            target = score_targets(problem, path)  # (S, B, N, d)
        x = path[..., 1:, :].reshape(S, -1, problem.dim)
        t = t_pts.repeat(cfg.batch).view(1, -1, 1).expand(S, -1, 1)
        pred = net(t, x).view_as(target)
        return (0.5 * dt * (pred - target).pow(2)).sum((-1, -2)).mean(-1)

    return train_ensemble(net, loss_fn, cfg, log)


@torch.no_grad()
def sample_score_bridge(problem: BridgeProblem, net: EnsembleMLP, n: int, gens: list[torch.Generator]):
    """Time reversal of the forward process started at v (Heng et al.): at forward time t_k,
    Z_{k-1} = Z_k + (-f(t_k, Z_k) + sigma n_theta(t_k, Z_k)) dt + sigma dW. Paths (S, n, N+1, d) in
    forward time order, on the CPU; the left end is not forced to x0."""
    dW = increments_per_seed(gens, n, problem)
    noise = dW @ problem.sigma32.T
    z = problem.v.to(noise).expand(len(gens), n, problem.dim)
    path = [z]
    for k in range(problem.n_steps, 0, -1):
        t, dt = problem.tl[k], problem.dts[k - 1]
        drift = -problem.diffusion.drift(t, z) + net(t, z) @ problem.sigma32.T
        z = z + drift * dt + noise[..., k - 1, :]
        path.append(z)
    return torch.stack(path[::-1], -2).cpu()


# ---- brute force -------------------------------------------------------------------------------


@torch.no_grad()
def brute_force(
    problem: BridgeProblem, n_paths: int, half_width: float, gen: torch.Generator, chunk: int = 20000
) -> torch.Tensor:
    """Forward paths whose endpoint lies in the box v ± half_width (every coordinate)."""
    kept = []
    for start in range(0, n_paths, chunk):
        dW = increments_per_seed([gen], min(chunk, n_paths - start), problem)[0]
        path = simulate_forward(problem, dW)
        ok = ((path[:, -1] - problem.v.to(path)).abs() <= half_width).all(-1)
        kept.append(path[ok].cpu())
    return torch.cat(kept)
