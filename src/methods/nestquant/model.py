"""Simulated W/A/KV quantization of Llama and BERT modules (NestQuant Sec. 4, QuaRot-style rotations).

`QuantLinear` replaces an nn.Linear: y = Q_a(R x) · Q_w(W R^T)^T + b, with R the randomized Hadamard
rotation of the input dimension (R orthogonal, so with identity quantizers y = W x + b exactly).
The KV cache, two ways (config key nestquant.quant.kv_cache):
- `quantize_kv_post_rope` (`post_rope`, the default; as the official code's attention does it): after
  RoPE, queries and keys are rotated by the same Hadamard of the head (scores unchanged, R orthogonal), the
  rotated keys quantized, the values quantized unrotated. It routes each attention module through the
  `nestquant_kv` attention function (transformers' AttentionInterface), which then calls the module's own
  attention implementation.
- `quantize_kv` (`pre_rope`): forward hooks on the key / value projections quantize each head's vector
  after its own rotation and rotate it back, keys before RoPE (RoPE rotates pairs within a head and
  preserves norms), values rotated.
"""

from __future__ import annotations

import copy
import sys
from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn
from transformers import AttentionInterface
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

from methods.nestquant.quant import random_hadamard, rotate, unrotate

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
        rotation: str = "kronecker",
    ):
        super().__init__()
        k = linear.in_features
        self.register_buffer("signs", random_hadamard(k, seed) if rotate_input else torch.ones(k))
        self.rotate_input = rotate_input
        self.rotation = rotation
        w = linear.weight.detach().float() if weight is None else weight.float()
        w_rot = rotate(w, self.signs, rotation) if rotate_input else w  # rows of W R^T
        self.register_buffer("weight_hat", weight_q(w_rot) if weight_q is not None else w_rot)
        self.bias = None if linear.bias is None else nn.Parameter(linear.bias.detach().clone(), requires_grad=False)
        self.act_q = act_q

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xr = rotate(x.float(), self.signs, self.rotation) if self.rotate_input else x.float()
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
    rotation: str = "kronecker",
) -> nn.Module:
    """Replace every nn.Linear of `names` (default: all but lm_head / pooler) by a QuantLinear, in place.
    `weights` may give already-quantized rotated weights (e.g. from LDLQ) per name; `rotation` is the
    Hadamard construction for widths that are not powers of two (quant.ROTATIONS)."""
    for i, name in enumerate(names or linear_names(model)):
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        lin = getattr(parent, child)
        if weights is not None and name in weights:
            q = QuantLinear(lin, None, act_q, seed + i, rotate_input, rotation=rotation)
            q.weight_hat.copy_(weights[name])
        else:
            q = QuantLinear(lin, weight_q, act_q, seed + i, rotate_input, rotation=rotation)
        setattr(parent, child, q)
    return model


def quantize_kv(
    model: nn.Module,
    kv_q: Quantizer,
    head_dim: int,
    seed: int,
    rotate_heads: bool = True,
    names=("k_proj", "v_proj", "attention.self.key", "attention.self.value"),
    rotation: str = "kronecker",
) -> list:
    """The `pre_rope` KV cache: forward hooks quantizing every head vector of the key/value projections'
    outputs (after a randomized Hadamard rotation of the head, undone after quantization, unless
    rotate_heads is False, e.g. for plain RTN)."""
    signs = random_hadamard(head_dim, seed)

    def hook(module, args, out):
        shape = out.shape
        h = out.float().reshape(*shape[:-1], shape[-1] // head_dim, head_dim)
        if not rotate_heads:
            return kv_q(h).reshape(shape).to(out.dtype)
        hq = kv_q(rotate(h, signs, rotation))
        return unrotate(hq, signs, rotation).reshape(shape).to(out.dtype)

    handles = []
    for name, module in model.named_modules():
        if any(name.endswith(n) for n in names):
            handles.append(module.register_forward_hook(hook))
    return handles


# --- the official KV path: Hadamard on queries and keys after RoPE, values unrotated --------------------

KV_ATTENTION = "nestquant_kv"
ATTENTION_CHILDREN = (("q_proj", "k_proj", "v_proj"), ("query", "key", "value"))  # Llama-like, BERT


@dataclass
class KVQuant:
    """What `nestquant_kv` does to one attention module's post-RoPE queries, keys and values."""

    key_q: Quantizer
    value_q: Quantizer
    signs: torch.Tensor | None  # rotation of queries and keys (None: no rotation)
    rotation: str
    base: str  # the module's own attention implementation, called afterwards


def _own_eager(module: nn.Module) -> Callable:
    return sys.modules[type(module).__module__].eager_attention_forward


def kv_attention(module, query, key, value, attention_mask, **kwargs):
    """Attention with the KV cache quantized as the official code does (queries, keys, values: (B, nh, T, hs),
    after RoPE): Q <- Q R^T, K <- Q_k(K R^T), V <- Q_v(V); Q K^T is unchanged by the rotation alone."""
    kv: KVQuant = module.nestquant_kv
    if kv.signs is not None:
        query = rotate(query, kv.signs, kv.rotation).to(query.dtype)
        key = rotate(key, kv.signs, kv.rotation).to(key.dtype)
    key = kv.key_q(key).to(query.dtype)
    value = kv.value_q(value).to(query.dtype)
    base = ALL_ATTENTION_FUNCTIONS.get_interface(kv.base, _own_eager(module))
    return base(module, query, key, value, attention_mask, **kwargs)


AttentionInterface.register(KV_ATTENTION, kv_attention)


def attention_modules(model: nn.Module) -> list[nn.Module]:
    """The attention modules (the ones with query, key and value projections and a config) of a model."""
    out = []
    for module in model.modules():
        children = dict(module.named_children())
        if hasattr(module, "config") and any(all(c in children for c in names) for names in ATTENTION_CHILDREN):
            out.append(module)
    return out


def quantize_kv_post_rope(
    model: nn.Module,
    key_q: Quantizer,
    value_q: Quantizer,
    head_dim: int,
    seed: int,
    rotate_heads: bool = True,
    rotation: str = "kronecker",
) -> list[nn.Module]:
    """The `post_rope` KV cache (the default): every attention module of `model` rotates its post-RoPE
    queries and keys by one randomized Hadamard of the head (unless rotate_heads is False), quantizes the
    keys with key_q and the unrotated values with value_q. Returns the modules changed."""
    modules = attention_modules(model)
    if not modules:
        raise ValueError(f"quantize_kv_post_rope: no attention module with {ATTENTION_CHILDREN} in the model")
    signs = random_hadamard(head_dim, seed) if rotate_heads else None
    for module in modules:
        base = module.config._attn_implementation
        if base == KV_ATTENTION:
            raise ValueError("quantize_kv_post_rope: the KV cache of this model is already quantized")
        module.config = copy.copy(module.config)  # this module alone dispatches to nestquant_kv
        module.config._attn_implementation_internal = KV_ATTENTION
        module.nestquant_kv = KVQuant(key_q, value_q, signs, rotation, base or "eager")
    return modules
