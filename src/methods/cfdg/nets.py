"""Ensembles of small MLPs evaluated in one batched matmul: member e of every layer is an independent network,
so S seeds x V variants train side by side at the cost of one (CPU jobs pay per-op overhead, not flops)."""

from __future__ import annotations

import math

import torch
from torch import nn


class EnsembleLinear(nn.Module):
    """E independent linear maps: x (E, B, i) -> (E, B, o); init as torch.nn.Linear (uniform +-1/sqrt(i))."""

    def __init__(self, n_members: int, d_in: int, d_out: int, generator: torch.Generator):
        super().__init__()
        bound = 1.0 / math.sqrt(d_in)
        self.weight = nn.Parameter((torch.rand(n_members, d_in, d_out, generator=generator) * 2 - 1) * bound)
        self.bias = nn.Parameter((torch.rand(n_members, 1, d_out, generator=generator) * 2 - 1) * bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.baddbmm(self.bias, x, self.weight)


class EnsembleMLP(nn.Module):
    """E MLPs d_in -> hidden... -> d_out with `act` between layers."""

    def __init__(
        self,
        n_members: int,
        d_in: int,
        hidden: list[int],
        d_out: int,
        generator: torch.Generator,
        act: type[nn.Module] = nn.ReLU,
    ):
        super().__init__()
        dims = [d_in, *hidden, d_out]
        layers: list[nn.Module] = []
        for i in range(len(dims) - 1):
            layers.append(EnsembleLinear(n_members, dims[i], dims[i + 1], generator))
            if i < len(dims) - 2:
                layers.append(act())
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def select_members(module: nn.Module, index: torch.Tensor) -> dict:
    """State dict of `module` restricted (or repeated) to members `index`: every parameter's dim 0 is the member."""
    return {k: v[index].clone() for k, v in module.state_dict().items()}
