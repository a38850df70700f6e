"""Apply a SLiM recipe to every linear layer of a transformer (one-shot, layer by layer from calibration stats).

A recipe (config `slim.recipes.<name>`) names the pruner, the weight quantizer, the adapter kind and its
options; `compress_model` replaces each targeted nn.Linear by a `SlimLinear` holding the compressed
weight and returns the per-layer errors. The calibration statistics come from
`methods.common.lm.capture_linear_inputs` on the dense model (all layers in one pass; the authors
propagate through already-compressed layers, see the package README).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn
from tqdm.auto import tqdm

from methods.common.config import check_keys

from .layer import SlimLinear
from .lora import compress_weight, output_error, weighted_error


@dataclass
class Recipe:
    """One rung of the quality ladder (Section 4 / Table 1 rows)."""

    pruner: str = "wanda"  # magnitude | wanda | sparsegpt
    quantizer: str = "slim"  # slim | absmax | group
    bits: int = 4
    group_size: int = 128  # only for quantizer: group
    adapter: str = "none"  # none | naive | slim
    rank_ratio: float = 0.1  # adapter rank / min(N, K)
    adapter_bits: int | None = None  # quantize L and R (per-group RTN) when set
    adapter_group_size: int = 128
    input_bits: int | None = None  # 8: per-token input quantization at inference
    peft: bool = False  # fine-tune the adapters only on the calibration text
    n_bins: int | None = None  # SLiM-Quant histogram bins (None: numel/1000 within [512, 20000])
    damp: float = 0.01  # SparseGPT dampening (fraction of mean diag H)
    order: str = "quantize_first"  # official: mask applied to Q(W); prune_first: Q(mask * W)
    shift_zero_metrics: bool = True  # official run script: Wanda metric / saliency on shift_zeros(mean x^2)
    pad_rank: bool | None = None  # None: rank rounded up to adapter_group_size when adapter_bits is set (official)
    adapter_quant_order: str = "after_base"  # official: adapters quantized after the base absorbed them
    clip_search: str = "official"  # SLiM-Quant search: official (floor, step alpha/2^b) | rounding (ours)

    @classmethod
    def from_dict(cls, d: dict) -> "Recipe":
        check_keys(cls, d)
        r = cls(**d)
        if r.peft and r.adapter == "none":
            raise ValueError("recipe: peft needs adapters (adapter: naive or slim)")
        return r


def target_linears(model: nn.Module, skip: tuple[str, ...] = ("lm_head",)) -> dict[str, nn.Linear]:
    """The nn.Linear modules SLiM compresses: every linear of the transformer blocks (not the LM head)."""
    return {
        name: m
        for name, m in model.named_modules()
        if isinstance(m, nn.Linear) and not any(s in name.split(".") for s in skip)
    }


def _set_module(model: nn.Module, name: str, new: nn.Module) -> None:
    parent, _, child = name.rpartition(".")
    setattr(model.get_submodule(parent) if parent else model, child, new)


@torch.no_grad()
def compress_model(
    model: nn.Module,
    recipe: Recipe,
    stats: dict[str, dict[str, torch.Tensor]],
    held_out: dict[str, dict[str, torch.Tensor]] | None = None,
    backend: str = "dense",
    skip: tuple[str, ...] = ("lm_head",),
) -> dict[str, dict[str, float]]:
    """Compress every target linear in place; return per layer the relative output and weighted errors.

    `stats` (calibration) drive the compression; errors are measured on `held_out` statistics when
    given (inputs the compression did not see), else on the calibration ones.
    """
    errors = {}
    layers = target_linears(model, skip)
    missing = [n for n in layers if n not in stats]
    if missing:
        raise KeyError(
            f"compress_model: no calibration statistics for {missing[:3]}...; "
            f"capture_linear_inputs must see every nn.Linear"
        )
    for name, lin in tqdm(layers.items(), desc="compress", mininterval=5):
        s = stats[name]
        w = lin.weight.detach().float()
        cw = compress_weight(
            w,
            pruner=recipe.pruner,
            quantizer=recipe.quantizer,
            bits=recipe.bits,
            adapter=recipe.adapter,
            rank_ratio=recipe.rank_ratio,
            mean_sq=s["mean_sq"],
            hessian=s["hessian"],
            group_size=recipe.group_size,
            n_bins=recipe.n_bins,
            adapter_bits=None if recipe.peft else recipe.adapter_bits,
            adapter_group_size=recipe.adapter_group_size,
            damp=recipe.damp,
            order=recipe.order,
            shift_zero_metrics=recipe.shift_zero_metrics,
            pad_rank=recipe.pad_rank if recipe.pad_rank is not None else recipe.adapter_bits is not None,
            adapter_quant_order=recipe.adapter_quant_order,
            clip_search=recipe.clip_search,
        )
        e = (held_out or stats)[name]
        w_hat = cw.dense()
        errors[name] = {
            "output_error": output_error(w, w_hat, e["hessian"]),
            "weighted_error": weighted_error(w, w_hat, e["mean_sq"]),
        }
        bias = None if lin.bias is None else lin.bias.detach().float().clone()
        _set_module(model, name, SlimLinear(cw, bias, input_bits=recipe.input_bits, backend=backend))
    return errors


@torch.no_grad()
def layer_errors(
    model: nn.Module, dense: nn.Module, stats: dict[str, dict[str, torch.Tensor]]
) -> dict[str, dict[str, float]]:
    """Errors of every SlimLinear of `model` against the same layer of `dense` (e.g. after PEFT moved the adapters)."""
    errors = {}
    for name, m in model.named_modules():
        if isinstance(m, SlimLinear):
            w = dense.get_submodule(name).weight.detach().float()
            errors[name] = {
                "output_error": output_error(w, m.effective_weight(), stats[name]["hessian"]),
                "weighted_error": weighted_error(w, m.effective_weight(), stats[name]["mean_sq"]),
            }
    return errors


def recipe_dict(recipe: Recipe) -> dict:
    return asdict(recipe)
