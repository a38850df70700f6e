"""Simulated W/A/KV quantization of Llama and BERT modules (NestQuant Sec. 4, QuaRot-style rotations).

`QuantLinear` replaces an nn.Linear: y = Q_a(R x) · Q_w(W R^T)^T + b, with R the randomized Hadamard
rotation of the input dimension (R orthogonal, so with identity quantizers y = W x + b exactly).
`quantize_kv` adds forward hooks on the key / value projections that quantize each head's vector
(after its own rotation) as the KV cache would store it. Keys are quantized before RoPE here
(RoPE rotates pairs within a head and preserves norms).
"""

from __future__ import annotations

from typing import Callable

import torch
from torch import nn

from methods.nestquant.quant import fwht, random_hadamard, rotate

Quantizer = Callable[[torch.Tensor], torch.Tensor]


class QuantLinear(nn.Module):
    def __init__(
        self,
        linear: nn.Linear,
        weight_q: Quantizer | None,
        act_q: Quantizer | None,
        seed: int,
        rotate_input: bool = True,
        weight: torch.Tensor | None = None,
    ):
        super().__init__()
        k = linear.in_features
        self.register_buffer("signs", random_hadamard(k, seed) if rotate_input else torch.ones(k))
        self.rotate_input = rotate_input
        w = linear.weight.detach().float() if weight is None else weight.float()
        w_rot = rotate(w, self.signs) if rotate_input else w  # rows of W R^T
        self.register_buffer("weight_hat", weight_q(w_rot) if weight_q is not None else w_rot)
        self.bias = None if linear.bias is None else nn.Parameter(linear.bias.detach().clone(), requires_grad=False)
        self.act_q = act_q

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xr = rotate(x.float(), self.signs) if self.rotate_input else x.float()
        if self.act_q is not None:
            xr = self.act_q(xr)
        y = xr @ self.weight_hat.T
        return (y if self.bias is None else y + self.bias).to(x.dtype)


def linear_names(model: nn.Module, skip=("lm_head", "pooler")) -> list[str]:
    return [n for n, m in model.named_modules() if isinstance(m, nn.Linear) and not any(s in n for s in skip)]


def quantize_linears(
    model: nn.Module,
    weight_q: Quantizer | None,
    act_q: Quantizer | None,
    seed: int,
    rotate_input: bool = True,
    weights: dict | None = None,
    names=None,
) -> nn.Module:
    """Replace every nn.Linear of `names` (default: all but lm_head / pooler) by a QuantLinear, in place.
    `weights` may give already-quantized rotated weights (e.g. from LDLQ) per name."""
    for i, name in enumerate(names or linear_names(model)):
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        lin = getattr(parent, child)
        if weights is not None and name in weights:
            q = QuantLinear(lin, None, act_q, seed + i, rotate_input)
            q.weight_hat.copy_(weights[name])
        else:
            q = QuantLinear(lin, weight_q, act_q, seed + i, rotate_input)
        setattr(parent, child, q)
    return model


def quantize_kv(
    model: nn.Module,
    kv_q: Quantizer,
    head_dim: int,
    seed: int,
    rotate_heads: bool = True,
    names=("k_proj", "v_proj", "attention.self.key", "attention.self.value"),
) -> list:
    """Forward hooks quantizing every head vector of the key/value projections' outputs (after a
    randomized Hadamard rotation of the head unless rotate_heads is False, e.g. for plain RTN)."""
    signs = random_hadamard(head_dim, seed)

    def hook(module, args, out):
        shape = out.shape
        h = out.float().reshape(*shape[:-1], shape[-1] // head_dim, head_dim)
        if not rotate_heads:
            return kv_q(h).reshape(shape).to(out.dtype)
        hq = kv_q(rotate(h, signs))
        return (fwht(hq) * signs.to(hq.device)).reshape(shape).to(out.dtype)  # R^-1 = D H (H symmetric, orthonormal)

    handles = []
    for name, module in model.named_modules():
        if any(name.endswith(n) for n in names):
            handles.append(module.register_forward_hook(hook))
    return handles
