"""Apply a SLiM recipe to every linear layer of a transformer (one-shot, layer by layer from calibration stats).

A recipe (config `slim.recipes.<name>`) names the pruner, the weight quantizer, the adapter kind and its
options; `compress_model` replaces each targeted nn.Linear by a `SlimLinear` holding the compressed
weight and returns the per-layer errors. The calibration statistics come from
`methods.common.lm.capture_linear_inputs` on the dense model (all layers in one pass; the authors
propagate through already-compressed layers, see the package README).
"""

from __future__ import annotations

from dataclasses import asdict

import torch
from torch import nn
from tqdm.auto import tqdm

from .layer import SlimLinear
from .lora import compress_weight, output_energy, output_error, weighted_error
from .recipe import Recipe


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


def compress_options(recipe: Recipe) -> dict:
    """The keyword arguments of `compress_weight` for `recipe` (besides the weight and its statistics): two
    recipes with equal options give the same one-shot compression, as a PEFT recipe and its one-shot rung do
    (its adapters are quantized after PEFT, not here)."""
    return dict(
        pruner=recipe.pruner,
        quantizer=recipe.quantizer,
        bits=recipe.bits,
        adapter=recipe.adapter,
        rank_ratio=recipe.rank_ratio,
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


def one_shot_key(recipe: Recipe, backend: str = "dense") -> tuple:
    """What determines the model `compress_model` returns for `recipe`: its options, input bits and backend."""
    return (tuple(sorted(compress_options(recipe).items())), recipe.input_bits, backend)


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
    options = compress_options(recipe)
    for name, lin in tqdm(layers.items(), desc="compress", mininterval=5):
        s = stats[name]
        w = lin.weight.detach().float()
        cw = compress_weight(w, mean_sq=s["mean_sq"], hessian=s["hessian"], **options)
        e = (held_out or stats)[name]
        w_hat = cw.dense()
        errors[name] = {
            "output_error": output_error(w, w_hat, e["hessian"], e.get("output_energy")),
            "weighted_error": weighted_error(w, w_hat, e["mean_sq"]),
        }
        bias = None if lin.bias is None else lin.bias.detach().float().clone()
        _set_module(model, name, SlimLinear(cw, bias, input_bits=recipe.input_bits, backend=backend))
    return errors


@torch.no_grad()
def add_output_energies(model: nn.Module, stats: dict, skip: tuple[str, ...] = ("lm_head",)) -> None:
    """Store tr(W H W^T) of every target linear of the dense `model` in its `stats` entry ("output_energy"):
    the denominator of its output error, which every recipe's error then reuses instead of recomputing."""
    for name, lin in target_linears(model, skip).items():
        if name in stats:
            stats[name]["output_energy"] = output_energy(lin.weight.detach(), stats[name]["hessian"])


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
                "output_error": output_error(
                    w, m.effective_weight(), stats[name]["hessian"], stats[name].get("output_energy")
                ),
                "weighted_error": weighted_error(w, m.effective_weight(), stats[name]["mean_sq"]),
            }
    return errors


def recipe_dict(recipe: Recipe) -> dict:
    return asdict(recipe)
