"""Learned denoisers m_theta(h) ~ E[x | h] (formula (L)) and their per-bit logistic loss.

The networks read the natural parameter h = alpha * sum_j y_j of one or several measurements, so
one network serves every noise level alpha and every number of measurements m. They output
logits f with m_theta = tanh(f / 2); the logit carries a skip connection 2h (the exact logit
under a uniform prior), the network learns the correction.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn


def logistic_loss(logits: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Per-bit logistic loss (L), mean over bits and batch: log(1 + exp(-x f))."""
    return nn.functional.softplus(-x * logits).mean()


def logistic_loss_grad(logits: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Closed-form d loss / d logits of `logistic_loss`: -x sigmoid(-x f) / numel."""
    return -x * torch.sigmoid(-x * logits) / logits.numel()


def denoiser_mean(logits: torch.Tensor) -> torch.Tensor:
    """m_theta = E_theta[x | h] = tanh(f / 2) = 2 sigmoid(f) - 1."""
    return torch.tanh(logits / 2)


def _features(h: torch.Tensor) -> list[torch.Tensor]:
    return [torch.tanh(h), h / 4]


class MLPDenoiser(nn.Module):
    def __init__(self, d: int, hidden: int, layers: int):
        super().__init__()
        blocks, width = [], 2 * d
        for _ in range(layers):
            blocks += [nn.Linear(width, hidden), nn.SiLU()]
            width = hidden
        self.net = nn.Sequential(*blocks, nn.Linear(width, d))

    def forward(self, h: torch.Tensor) -> torch.Tensor:  # (B, d) -> logits (B, d)
        return 2 * h + self.net(torch.cat(_features(h), dim=1))


class CNNDenoiser(nn.Module):
    """Small fully convolutional denoiser for side x side images flattened to d = side^2."""

    def __init__(self, side: int, channels: int, layers: int):
        super().__init__()
        self.side = side
        blocks, width = [], 2
        for _ in range(layers):
            blocks += [nn.Conv2d(width, channels, 3, padding=1), nn.SiLU()]
            width = channels
        self.net = nn.Sequential(*blocks, nn.Conv2d(width, 1, 3, padding=1))

    def forward(self, h: torch.Tensor) -> torch.Tensor:  # (B, side^2) -> logits (B, side^2)
        img = torch.stack([f.view(-1, self.side, self.side) for f in _features(h)], dim=1)  # (B, 2, s, s)
        return 2 * h + self.net(img).flatten(1)


def build_denoiser(arch: str, d: int, model: dict) -> nn.Module:
    if arch == "mlp":
        return MLPDenoiser(d, model["hidden"], model["layers"])
    if arch == "cnn":
        side = int(round(math.sqrt(d)))
        assert side * side == d, f"cnn denoiser needs square images, got d={d}"
        return CNNDenoiser(side, model["channels"], model["layers"])
    raise ValueError(f"unknown denoiser architecture {arch!r}; use mlp or cnn")


def noisy_natural_parameter(
    x: torch.Tensor, alphas: list[float], max_measurements: int, generator: torch.Generator
) -> torch.Tensor:
    """h = alpha * (y_1 + .. + y_k) with alpha drawn from `alphas` and k from 1..max_measurements per row."""
    n, d = x.shape
    alpha = torch.tensor(alphas)[torch.randint(len(alphas), (n,), generator=generator)]  # (n,)
    k = torch.randint(1, max_measurements + 1, (n,), generator=generator)
    keep_p = ((1 + torch.tanh(alpha)) / 2)[:, None, None]
    keep = torch.rand((n, max_measurements, d), generator=generator) < keep_p
    ys = torch.where(keep, x[:, None, :], -x[:, None, :])  # (n, M, d)
    used = (torch.arange(max_measurements)[None, :] < k[:, None]).float()[:, :, None]
    return alpha[:, None] * (ys * used).sum(1)


def train_denoiser(
    net: nn.Module,
    x_train: torch.Tensor,
    alphas: list[float],
    max_measurements: int,
    steps: int,
    batch_size: int,
    lr: float,
    generator: torch.Generator,
) -> list[float]:
    """Adam on the logistic loss (L) over fresh noise each step; returns the loss history. The batches and
    their noise are drawn on the CPU `generator` and moved to the network's device."""
    device = next(net.parameters()).device
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    history = []
    for _ in range(steps):
        idx = torch.randint(len(x_train), (batch_size,), generator=generator)
        x = x_train[idx]
        h = noisy_natural_parameter(x, alphas, max_measurements, generator)
        loss = logistic_loss(net(h.to(device)), x.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        history.append(float(loss.detach()))
    return history


def as_denoiser(net: nn.Module):
    """h (B, d) -> m_theta(h) (B, d), without gradients, in evaluation mode: computed on the network's device,
    returned on h's (the samplers draw on the CPU)."""
    net.eval()
    device = next(net.parameters()).device

    @torch.no_grad()
    def m(h: torch.Tensor) -> torch.Tensor:
        return denoiser_mean(net(h.to(device))).to(h.device)

    return m


def expected_loss_minimiser(mean: np.ndarray) -> np.ndarray:
    """The logit minimising E[log(1 + exp(-x f))] when E[x] = mean: f = 2 atanh(mean)."""
    return 2 * np.arctanh(mean)
