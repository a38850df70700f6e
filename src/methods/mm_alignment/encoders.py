"""Unimodal encoders of Tjandrasuwita et al. (ICML 2025, Section 3.1; official
`unimodals/common_models.CustomMLP` and `train_compute_align.py`), rewritten from their description.

Encoder of depth L: fc1 (d_in -> width), then L x [LeakyReLU(0.1), Linear(width, width)], and a linear
classification head. Its hidden states are the outputs of every LeakyReLU (L of them). Each encoder is
trained alone on its own modality with cross-entropy and AdamW; the parameters with the best
validation accuracy are kept.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn


class MLPEncoder(nn.Module):
    """fc1, then `depth` x [LeakyReLU(0.1), Linear]; `head` maps the last Linear's output to logits."""

    def __init__(self, d_in: int, width: int, depth: int, n_classes: int):
        super().__init__()
        if depth < 1:
            raise ValueError(f"encoder depth must be >= 1, got {depth}")
        self.fc1 = nn.Linear(d_in, width)
        self.blocks = nn.ModuleList(nn.Sequential(nn.LeakyReLU(0.1), nn.Linear(width, width)) for _ in range(depth))
        self.head = nn.Linear(width, n_classes)

    def forward(self, x: torch.Tensor, return_hidden: bool = False):
        h = self.fc1(x)                                  # (N, width)
        hidden = []
        for block in self.blocks:
            act = block[0](h)                            # the LeakyReLU output is a hidden state
            hidden.append(act)
            h = block[1](act)
        logits = self.head(h)                            # (N, n_classes)
        return (logits, hidden) if return_hidden else logits


@dataclass(frozen=True)
class TrainSpec:
    epochs: int
    batch_size: int
    lr: float
    weight_decay: float


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return float((model(x).argmax(dim=1) == y).double().mean())


def train_encoder(model: nn.Module, x_tr: torch.Tensor, y_tr: torch.Tensor, x_va: torch.Tensor,
                  y_va: torch.Tensor, spec: TrainSpec, generator: torch.Generator) -> dict:
    """AdamW on cross-entropy; the model ends with the parameters of its best validation accuracy."""
    opt = torch.optim.AdamW(model.parameters(), lr=spec.lr, weight_decay=spec.weight_decay)
    loss_fn = nn.CrossEntropyLoss()
    n = x_tr.shape[0]
    best_acc, best_state, best_epoch = -1.0, None, -1
    for epoch in range(spec.epochs):
        model.train()
        perm = torch.randperm(n, generator=generator)
        for i in range(0, n, spec.batch_size):
            idx = perm[i:i + spec.batch_size]
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x_tr[idx]), y_tr[idx]).backward()
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
    with torch.no_grad():
        return model(x, return_hidden=True)[1]


def stratified_split(y: np.ndarray, fractions: tuple[float, float, float], rng: np.random.Generator):
    """Indices (train, val, test), each class split in the given proportions (official: 70/15/15)."""
    parts = ([], [], [])
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        n_tr = int(round(fractions[0] * len(idx)))
        n_va = int(round(fractions[1] * len(idx)))
        parts[0].append(idx[:n_tr])
        parts[1].append(idx[n_tr:n_tr + n_va])
        parts[2].append(idx[n_tr + n_va:])
    return tuple(np.sort(np.concatenate(p)) for p in parts)


def zscore(x: np.ndarray, train_idx: np.ndarray) -> np.ndarray:
    """Standardise every feature with the training split's mean and sd (constant features -> 0)."""
    mu = x[train_idx].mean(axis=0)
    sd = x[train_idx].std(axis=0)
    return (x - mu) / np.where(sd > 0, sd, 1.0)
