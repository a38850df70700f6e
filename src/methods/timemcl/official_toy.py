"""The authors' toy experiment (official repository, toy/): Brownian-motion windows quantized by K heads.

Set-up as the official toy code reads (written here from its description, not copied):
  * a standard Brownian motion W on `n_grid` points of [0, 1]; a window of `window` consecutive
    points starts at a uniformly drawn index; the network sees the window's first value x0 = W_start
    and predicts the whole window (its first point included);
  * an MLP x0 -> 200 -> 200 (ReLU) -> 200, then K linear heads of `window` outputs;
  * relaxed WTA with eps = 0.05 over the per-hypothesis error sum_t (x_hat_t - x_t)^2;
  * Adam, lr 1e-3, a fresh batch of windows every step.

Given x0 the window is x0 + (a Brownian path of `window` points started at 0), whatever the start,
so the best K predictions are x0 + c_k with {c_k} the optimal K-point quantizer of that path's law
(paper Prop. 5.1: WTA heads form a conditional stationary quantizer). The reference here is k-means
(Lloyd, `toy.lloyd_quantizer`) on `n_reference` sampled paths.

Prop. 5.2 (the score heads converge to the probability mass of each head's Voronoi cell) needs
score heads, which the official toy does not have. We add K linear score heads (sigmoid, BCE
against the one-hot winner, the score loss of the real-data model) on *detached* backbone
features, so the hypotheses train exactly as in the official toy.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

from .losses import mcl_loss
from .toy import lloyd_quantizer


def sample_windows(n: int, n_grid: int, window: int, generator: torch.Generator) -> torch.Tensor:
    """n Brownian windows: W on n_grid points of [0, 1] (W_0 = 0), `window` points from a uniform start.

    Only the increments inside the window and W at its start are needed: W_start ~ N(0, t_start).
    -> (n, window) float32.
    """
    assert 2 <= window <= n_grid, f"need 2 <= window <= n_grid, got window={window}, n_grid={n_grid}"
    dt = 1.0 / (n_grid - 1)
    start = torch.randint(0, n_grid - window + 1, (n,), generator=generator)
    w_start = torch.randn(n, generator=generator, dtype=torch.float64) * torch.sqrt(start.double() * dt)
    incr = torch.randn(n, window - 1, generator=generator, dtype=torch.float64) * math.sqrt(dt)
    path = torch.cat([torch.zeros(n, 1, dtype=torch.float64), incr.cumsum(dim=1)], dim=1)
    return (w_start[:, None] + path).float()


class ToyMCL(nn.Module):
    """The official toy network (x0 -> K windows) plus K score heads on detached features."""

    def __init__(self, window: int, n_hypotheses: int, width: int = 200):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(1, width), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width))
        self.heads = nn.Linear(width, n_hypotheses * window)  # K independent linear heads, stacked
        self.scores = nn.Linear(width, n_hypotheses)
        self.K, self.window = n_hypotheses, window

    def forward(self, x0: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x0 (B,) -> hypotheses (B, K, window), score logits (B, K)."""
        h = self.backbone(x0[:, None])
        return self.heads(h).view(-1, self.K, self.window), self.scores(h.detach())


def untrained_toy(cfg: dict, seed: int) -> "ToyMCL":
    """The network `train_toy(cfg, seed)` starts from, untrained (the null of the toy claims)."""
    torch.manual_seed(seed)
    return ToyMCL(cfg["window"], cfg["n_hypotheses"], cfg["width"]).eval()


def train_toy(cfg: dict, seed: int, show_progress: bool = True) -> tuple[ToyMCL, list[float]]:
    """Relaxed-WTA training as the official toy (fresh windows every step). Returns (model, loss per step)."""
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = ToyMCL(cfg["window"], cfg["n_hypotheses"], cfg["width"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    losses = []
    for _ in tqdm(range(cfg["steps"]), disable=not show_progress, file=sys.stderr, desc=f"toy seed {seed}"):
        y = sample_windows(cfg["batch_size"], cfg["n_grid"], cfg["window"], gen)
        hyps, logits = model(y[:, 0])
        err = (hyps - y[:, None]).pow(2).sum(dim=2)  # (B, K): the official per-hypothesis error
        winner = F.one_hot(err.argmin(dim=1), cfg["n_hypotheses"]).float()
        loss = mcl_loss(err, "relaxed", cfg["eps"]) + cfg["score_weight"] * F.binary_cross_entropy_with_logits(
            logits, winner
        )
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return model.eval(), losses


@torch.no_grad()
def win_rates(model: ToyMCL, cfg: dict, seed: int) -> np.ndarray:
    """Head win rates on the test windows `evaluate_toy(model, cfg, seed)` uses (the same draws), without
    its k-means reference and score masses: (K,)."""
    gen = torch.Generator().manual_seed(10_000 + seed)
    sample_windows(cfg["n_reference"], cfg["n_grid"], cfg["window"], gen)  # the reference paths' draws
    test = sample_windows(cfg["n_test"], cfg["n_grid"], cfg["window"], gen).double()
    hyps, _ = model(test[:, 0].float())
    best = ((hyps.double() - test[:, None]) ** 2).sum(dim=2).argmin(dim=1).numpy()
    return np.bincount(best, minlength=cfg["n_hypotheses"]) / len(test)


def min_mse(hyps: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per window min_k mean_t (hyps_kt - y_t)^2: hyps (N, K, L), y (N, L) -> (N,)."""
    return ((hyps - y[:, None]) ** 2).mean(axis=2).min(axis=1)


def voronoi_masses(hyps: np.ndarray, futures: np.ndarray) -> np.ndarray:
    """Fraction of `futures` (S, L) nearest to each of the K hypotheses (K, L): the cells' masses (K,)."""
    d = ((futures[:, None] - hyps[None]) ** 2).sum(axis=2)  # (S, K)
    return np.bincount(d.argmin(axis=1), minlength=len(hyps)) / len(futures)


@torch.no_grad()
def evaluate_toy(model: ToyMCL, cfg: dict, seed: int) -> dict:
    """Distortion against the k-means reference, head win rates, and scores against Voronoi masses.

    * distortion: mean over `n_test` fresh windows of the per-window min-MSE (mean over the window's points);
      the reference is x0 + the k-means centres fitted on `n_reference` separate paths.
    * win rate of head k: the share of test windows whose best hypothesis is k.
    * Prop. 5.2: at `n_conditions` values of x0, the K sigmoid scores against the masses of the heads'
      Voronoi cells under `n_mass_samples` fresh futures; per condition max_k |score_k - mass_k|.
    """
    gen = torch.Generator().manual_seed(10_000 + seed)  # evaluation draws differ from every training draw
    K, L = cfg["n_hypotheses"], cfg["window"]
    paths = sample_windows(cfg["n_reference"], cfg["n_grid"], L, gen).double().numpy()
    centres, _ = lloyd_quantizer(paths - paths[:, :1], K, seed=seed)  # (K, L): quantizer of the 0-started path
    test = sample_windows(cfg["n_test"], cfg["n_grid"], L, gen).numpy().astype(np.float64)
    x0 = test[:, 0]
    hyps, _ = model(torch.from_numpy(x0).float())
    hyps = hyps.double().numpy()
    d_model, d_ref = min_mse(hyps, test), min_mse(x0[:, None, None] + centres[None], test)
    wins = np.bincount(((hyps - test[:, None]) ** 2).sum(axis=2).argmin(axis=1), minlength=K) / len(test)

    conds = np.linspace(-cfg["condition_range"], cfg["condition_range"], cfg["n_conditions"])
    h_c, logits = model(torch.from_numpy(conds).float())
    scores = torch.sigmoid(logits).double().numpy()
    gaps, uniform_gaps, masses = [], [], []
    for i, c in enumerate(conds):
        fut = sample_windows(cfg["n_mass_samples"], cfg["n_grid"], L, gen).double().numpy()
        fut = fut - fut[:, :1] + c  # the window given x0 = c
        m = voronoi_masses(h_c[i].double().numpy(), fut)
        masses.append(m.tolist())
        gaps.append(float(np.abs(scores[i] - m).max()))
        uniform_gaps.append(float(np.abs(1.0 / K - m).max()))  # the null: every score 1/K, the same cells
    d_naive = min_mse(x0[:, None, None] + np.zeros((1, 1, L)), test)  # the null: x0 over the whole window
    return {
        "seed": seed,
        "K": K,
        "window": L,
        "n_grid": cfg["n_grid"],
        "distortion_timemcl": float(d_model.mean()),
        "distortion_quantizer": float(d_ref.mean()),
        "distortion_ratio": float(d_model.mean() / d_ref.mean()),
        "distortion_se_timemcl": float(d_model.std(ddof=1) / math.sqrt(len(d_model))),
        "win_rates": wins.tolist(),
        "min_win_rate": float(wins.min()),
        "score_mass_gap_mean": float(np.mean(gaps)),
        "score_mass_gap_max": float(np.max(gaps)),
        "uniform_score_gap_mean": float(np.mean(uniform_gaps)),
        "naive_distortion_ratio": float(d_naive.mean() / d_ref.mean()),
        "conditions": conds.tolist(),
        "scores": scores.tolist(),
        "masses": masses,
        "quantizer_centres": centres.tolist(),
        "example_x0": float(conds[len(conds) // 2]),
        "example_heads": h_c[len(conds) // 2].tolist(),
    }
