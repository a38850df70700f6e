"""The official-code defaults against our alternatives on one layer: `python -m methods.slim.options`.

The layer is the parity case of tests/slim/test_parity.py (W 256 x 512 Student-t, 16 x 128 calibration
tokens, seed 0). For each recipe option the relative layer output error tr(D H D^T) / tr(W H W^T)
(Section 3.3's objective, H = E[x x^T]) is printed for the official default and for ours, with the
other options at their defaults; SLiM-LoRA at rank ratio 0.1, 4-bit SLiM-Quant, Wanda 2:4.
"""

from __future__ import annotations

import torch

from .lora import compress_weight, output_error

OPTIONS = {  # option: (official default, our alternative)
    "order": ("quantize_first", "prune_first"),
    "shift_zero_metrics": (True, False),
    "clip_search": ("official", "rounding"),
    "pad_rank": (True, False),  # with 4-bit adapters, where the official code pads
    "adapter_quant_order": ("after_base", "before_base"),
}


def parity_case(n: int = 256, k: int = 512, n_seq: int = 16, seq: int = 128, df: int = 4, seed: int = 0):
    """W (n, k) Student-t (df dof, scale 0.02) and calibration inputs (n_seq * seq, k) with per-channel scales."""
    g = torch.Generator().manual_seed(seed)
    w = 0.02 * torch.randn(n, k, generator=g) / torch.randn(n, k, df, generator=g).pow(2).mean(-1).sqrt()
    scales = torch.exp(0.5 * torch.randn(k, generator=g))
    x = torch.randn(n_seq, seq, k, generator=g) * scales
    return w, x.reshape(-1, k)


def option_errors(adapter_bits: int | None = 4) -> dict[str, tuple[float, float]]:
    """{option: (error with the official default, error with ours)}."""
    w, x = parity_case()
    mean_sq, h = x.pow(2).mean(0), x.double().T @ x.double() / x.shape[0]
    base = dict(
        pruner="wanda",
        quantizer="slim",
        bits=4,
        adapter="slim",
        rank_ratio=0.1,
        mean_sq=mean_sq,
        adapter_bits=adapter_bits,
        adapter_group_size=128,
    )
    out = {}
    for name, values in OPTIONS.items():
        out[name] = tuple(output_error(w, compress_weight(w, **{**base, name: v}).dense(), h) for v in values)
    ours = {name: values[1] for name, values in OPTIONS.items()}
    out["all"] = (out["order"][0], output_error(w, compress_weight(w, **{**base, **ours}).dense(), h))
    return out


if __name__ == "__main__":
    for bits in (None, 4):
        print(f"SLiM-LoRA, adapters {'fp32' if bits is None else f'{bits}-bit'}: relative output error")
        for name, (official, ours) in option_errors(bits).items():
            o, a = OPTIONS.get(name, ("every default", "every alternative"))
            print(f"  {name:22s} official {o!s:15s} {official:.4f}   ours {a!s:12s} {ours:.4f}")
