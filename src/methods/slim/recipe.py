"""A SLiM recipe (config `slim.recipes.<name>`): one rung of the quality ladder, checked without torch so that the
workflow refuses a bad recipe before any job runs (workflow/rules/helpers/slim.smk).

An option set (to other than its default) that the recipe does not read is an error naming it, since it would
otherwise be accepted and do nothing: `group_size` without the group quantizer, `damp` without SparseGPT, an
adapter option without adapters, ...
"""

from __future__ import annotations

from dataclasses import dataclass

from methods.common.config import check_keys


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
        # the config schema fills in defaults, so an option counts as set where it differs from its default
        defaults = cls()
        unused = options_without_effect(r, {k for k, v in d.items() if v != getattr(defaults, k)})
        if unused:
            raise ValueError(
                "recipe: "
                + "; ".join(f"option {k!r} has no effect, since {why}" for k, why in unused.items())
                + "; remove it, or change the option it depends on"
            )
        return r


def options_without_effect(recipe: Recipe, given) -> dict[str, str]:
    """{option: why} for each option of `given` (those a config sets to other than their default) that `recipe`
    never reads
    (methods.slim.lora.compress_weight and methods.slim.compress: which option is read under which choice)."""
    adapters = recipe.adapter != "none"
    pads = recipe.adapter_bits is not None if recipe.pad_rank is None else recipe.pad_rank
    reasons = {
        "group_size": None if recipe.quantizer == "group" else f"quantizer is {recipe.quantizer!r}, not 'group'",
        "n_bins": None if recipe.quantizer == "slim" else f"quantizer is {recipe.quantizer!r}, not 'slim'",
        "clip_search": None if recipe.quantizer == "slim" else f"quantizer is {recipe.quantizer!r}, not 'slim'",
        "damp": None if recipe.pruner == "sparsegpt" else f"pruner is {recipe.pruner!r}, not 'sparsegpt'",
        "shift_zero_metrics": None
        if recipe.pruner == "wanda" or recipe.adapter == "slim"
        else f"neither the pruner ({recipe.pruner!r}) nor the adapter ({recipe.adapter!r}) reads mean x^2",
    }
    for key in ("rank_ratio", "adapter_bits", "pad_rank", "adapter_group_size", "adapter_quant_order"):
        reasons[key] = None if adapters else "adapter is 'none'"
    if adapters and not (recipe.adapter_bits is not None or pads):
        reasons["adapter_group_size"] = "adapters are neither quantized (adapter_bits) nor padded (pad_rank)"
    if adapters and recipe.adapter_bits is None:
        reasons["adapter_quant_order"] = "adapters are not quantized (adapter_bits unset)"
    elif adapters and recipe.peft:
        reasons["adapter_quant_order"] = "with peft the adapters are quantized after fine-tuning, not with the base"
    return {k: why for k, why in reasons.items() if why is not None and k in given}
