"""Unimodal encoders of Tjandrasuwita et al. (ICML 2025, Section 3.1; official
`unimodals/common_models.CustomMLP` and `train_compute_align.py`), rewritten from their description.

Encoder of depth L (the official `num_hidden`): fc1 (d_in -> width), then L - 1 x [LeakyReLU(0.1),
Linear(width, width)], a last LeakyReLU, and a linear classification head on its output. Its hidden
states are the outputs of every LeakyReLU (L of them; the last one is what the head reads). Each
encoder is trained alone on its own modality with cross-entropy and AdamW, the gradient norm clipped
at 8 (official `training_structures/unimodal_supervised.train`); the parameters with the best
validation accuracy are kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn


class MLPEncoder(nn.Module):
    """fc1, then `depth` LeakyReLU(0.1)s with a Linear between consecutive ones, then `head` (Section 3.1).

    Layer order (the official CustomMLP with num_hidden = depth): fc1, act1, fc2, act2, ..., fc_L, act_L;
    the parameters are created in that order and the head last, so one torch seed gives the official
    initialisation."""

    def __init__(self, d_in: int, width: int, depth: int, n_classes: int):
        super().__init__()
        if depth < 1:
            raise ValueError(f"encoder depth must be >= 1, got {depth}")
        self.fc1 = nn.Linear(d_in, width)
        self.inner = nn.ModuleList(nn.Linear(width, width) for _ in range(depth - 1))
        self.act = nn.LeakyReLU(0.1)
        self.head = nn.Linear(width, n_classes)

    def layer_names(self) -> list[str]:
        """The encoder's layers in order, named as the official CustomMLP names them (head excluded)."""
        names = ["fc1"]
        for i in range(len(self.inner) + 1):
            names.append(f"leaky_relu{i + 1}")
            if i < len(self.inner):
                names.append(f"fc{i + 2}")
        return names

    def forward(self, x: torch.Tensor, return_hidden: bool = False):
        h = self.act(self.fc1(x))  # (N, width): hidden state 1
        hidden = [h]
        for linear in self.inner:
            h = self.act(linear(h))  # every LeakyReLU output is a hidden state
            hidden.append(h)
        logits = self.head(h)  # (N, n_classes)
        return (logits, hidden) if return_hidden else logits


@dataclass(frozen=True)
class TrainSpec:
    epochs: int
    batch_size: int
    lr: float
    weight_decay: float
    grad_clip: float = 8.0  # max gradient L2 norm (official clip_grad_norm_(..., 8)); 0 turns it off


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return float((model(x).argmax(dim=1) == y).double().mean())


def model_device(model: nn.Module) -> torch.device:
    return next(model.parameters()).device


def train_encoder(
    model: nn.Module,
    x_tr: torch.Tensor,
    y_tr: torch.Tensor,
    x_va: torch.Tensor,
    y_va: torch.Tensor,
    spec: TrainSpec,
    generator: torch.Generator,
) -> dict:
    """AdamW on cross-entropy with the gradient norm clipped at `spec.grad_clip` (official: 8); the model
    ends with the parameters of its best validation accuracy (strictly better epochs only, as official).
    The batches are drawn by `generator` on the CPU and taken from the data on the model's device."""
    opt = torch.optim.AdamW(model.parameters(), lr=spec.lr, weight_decay=spec.weight_decay)
    loss_fn = nn.CrossEntropyLoss()
    n = x_tr.shape[0]
    best_acc, best_state, best_epoch = -1.0, None, -1
    for epoch in range(spec.epochs):
        model.train()
        perm = torch.randperm(n, generator=generator)
        for i in range(0, n, spec.batch_size):
            idx = perm[i : i + spec.batch_size].to(x_tr.device)
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x_tr[idx]), y_tr[idx]).backward()
            if spec.grad_clip > 0:
                nn.utils.clip_grad_norm_(model.parameters(), spec.grad_clip)
            opt.step()
        model.eval()
        acc = accuracy(model, x_va, y_va)
        if acc > best_acc:
            best_acc, best_epoch = acc, epoch
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state)
    model.eval()
    return {"best_val_acc": best_acc, "best_epoch": best_epoch}


def hidden_states(model: MLPEncoder, x: torch.Tensor) -> list[torch.Tensor]:
    """The hidden states of `x` (moved to the model's device), on the CPU, where the metrics run."""
    with torch.no_grad():
        return [h.cpu() for h in model(x.to(model_device(model)), return_hidden=True)[1]]


def stratified_split(y: np.ndarray, fractions: tuple[float, float, float], rng: np.random.Generator):
    """Indices (train, val, test), each class split in the given proportions (official: 70/15/15)."""
    parts = ([], [], [])
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        n_tr = int(round(fractions[0] * len(idx)))
        n_va = int(round(fractions[1] * len(idx)))
        parts[0].append(idx[:n_tr])
        parts[1].append(idx[n_tr : n_tr + n_va])
        parts[2].append(idx[n_tr + n_va :])
    return tuple(np.sort(np.concatenate(p)) for p in parts)


def zscore(x: np.ndarray, train_idx: np.ndarray) -> np.ndarray:
    """Standardise every feature with the training split's mean and sd (constant features -> 0)."""
    mu = x[train_idx].mean(axis=0)
    sd = x[train_idx].std(axis=0)
    return (x - mu) / np.where(sd > 0, sd, 1.0)
