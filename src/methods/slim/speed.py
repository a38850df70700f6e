"""Speed and memory of SLiM's compressed layers (Section 4.3), measured on this machine.

- `layer_speed`: one linear layer at a given (N, K) (e.g. LLaMA-2-7B's shapes) and batch M: dense fp32,
  dense bf16, torch's int4 weight-only CPU kernel (`aten._weight_int4pack_mm_for_cpu`, group 128),
  the K1 int4 kernel, and SLiM's 2:4 + int4 (+ rank-r adapters) kernel. Median wall time of `repeats` runs.
- `decode_speed`: greedy decode tokens/s of a causal LM with its linears in each format.
- `memory_bytes`: bytes each format stores for a set of linear shapes (+ the uncompressed rest of the model).
The paper's speedups are GPU numbers (RTX 3060, A100); these are CPU ratios and are reported as such.
"""
from __future__ import annotations


import torch
import torch.nn.functional as F
from torch import nn

from methods import kernels

from methods.common.timing import median_time

from .layer import SlimLinear
from .lora import CompressedWeight, adapter_rank
from .prune import mask_2_4
from .quant import quantize_matrix

TORCH_INT4_GROUP = 128


class TorchInt4Linear(nn.Module):
    """Weight-only int4 (per-group asymmetric RTN) through torch's own CPU kernel; bf16 activations."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None = None, group_size: int = TORCH_INT4_GROUP):
        super().__init__()
        n, k = weight.shape
        while group_size > 32 and k % group_size:  # torch's kernel takes groups of 32, 64, 128 or 256
            group_size //= 2
        if k % group_size:
            raise ValueError(f"TorchInt4Linear: K={k} is not a multiple of 32 (torch's int4 group sizes)")
        w = weight.detach().float().reshape(n, k // group_size, group_size)
        lo, hi = w.amin(-1), w.amax(-1)
        scale = ((hi - lo) / 15).clamp_min(1e-8)
        zero = lo + 8 * scale  # torch's format: w = (q - 8) * scale + zero
        q = torch.clamp(torch.round((w - lo.unsqueeze(-1)) / scale.unsqueeze(-1)), 0, 15).reshape(n, k).to(torch.int32)
        self.packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(q, 2)
        self.scales_zeros = torch.stack([scale.T, zero.T], dim=-1).to(torch.bfloat16).contiguous()  # (K/g, N, 2)
        self.group_size, self.out_features = group_size, n
        self.bias = None if bias is None else bias.detach().to(torch.bfloat16)

    def forward(self, x):
        shape, dtype = x.shape, x.dtype
        y = torch.ops.aten._weight_int4pack_mm_for_cpu(x.reshape(-1, shape[-1]).to(torch.bfloat16), self.packed,
                                                       self.group_size, self.scales_zeros)
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(*shape[:-1], self.out_features).to(dtype)


class K1Int4Linear(nn.Module):
    """Weight-only int4 (per-group symmetric RTN, group 128) through the project's compiled kernel
    (`methods.kernels.int4_linear`; AVX-512 VNNI where the CPU has it); fp32 activations and output."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None = None, group_size: int = TORCH_INT4_GROUP):
        super().__init__()
        self.w = kernels.quantize_int4_rtn(weight.detach().float(), group_size=group_size)
        self.bias = None if bias is None else bias.detach().float()

    def forward(self, x):
        y = kernels.int4_linear(x, self.w)
        if self.bias is not None:
            y = y + self.bias
        return y.to(x.dtype)


def random_slim_weight(n: int, k: int, rank_ratio: float, seed: int = 0) -> CompressedWeight:
    """A 2:4 + SLiM-Quant 4-bit weight with rank-r adapters of the right shapes (timing needs no real values)."""
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(n, k, generator=g) / k ** 0.5
    mask = mask_2_4(w.abs())
    r = adapter_rank((n, k), rank_ratio) if rank_ratio > 0 else 0
    lora_l = torch.randn(n, r, generator=g) * 0.01 if r else None
    lora_r = torch.randn(r, k, generator=g) * 0.01 if r else None
    return CompressedWeight(quantize_matrix(w * mask, "absmax", 4), mask, lora_l, lora_r)


@torch.no_grad()
def layer_speed(n: int, k: int, m: int, rank_ratio: float, repeats: int) -> dict[str, float]:
    """Seconds per call of y = x W^T for each format at weight (N, K) and batch M."""
    g = torch.Generator().manual_seed(0)
    w = torch.randn(n, k, generator=g) / k ** 0.5
    x = torch.randn(m, k, generator=g)
    w16, x16 = w.to(torch.bfloat16), x.to(torch.bfloat16)
    t_int4 = TorchInt4Linear(w)
    k1_int4 = kernels.quantize_int4_rtn(w, group_size=TORCH_INT4_GROUP)
    slim = SlimLinear(random_slim_weight(n, k, rank_ratio), backend="kernel")
    slim_base = SlimLinear(random_slim_weight(n, k, 0.0), backend="kernel")
    out = {
        "dense_fp32": median_time(lambda: F.linear(x, w), repeats, warmup=2),
        "dense_bf16": median_time(lambda: F.linear(x16, w16), repeats, warmup=2),
        "torch_int4": median_time(lambda: t_int4(x16), repeats, warmup=2),
        "k1_int4": median_time(lambda: kernels.int4_linear(x, k1_int4), repeats, warmup=2),
        "slim_2_4_int4": median_time(lambda: slim_base(x), repeats, warmup=2),
        "slim_2_4_int4_lora": median_time(lambda: slim(x), repeats, warmup=2),
    }
    return out


def _replace_linears(model: nn.Module, make) -> nn.Module:
    from .compress import _set_module, target_linears

    for name, lin in target_linears(model).items():
        _set_module(model, name, make(lin))
    return model


def model_in_format(model: nn.Module, fmt: str, rank_ratio: float) -> nn.Module:
    """A copy of `model` whose target linears use `fmt`: dense_fp32 | dense_bf16 | torch_int4 | k1_int4 (our
    int4 kernel) | slim_2_4_int4 (SLiM's 2:4 + int4 base without adapters) | slim (with rank-r adapters)."""
    import copy

    m = copy.deepcopy(model)
    if fmt == "dense_fp32":
        return m.float()
    if fmt == "dense_bf16":
        return m.to(torch.bfloat16)
    if fmt == "torch_int4":
        return _replace_linears(m, lambda lin: TorchInt4Linear(lin.weight, lin.bias))
    if fmt == "k1_int4":
        return _replace_linears(m, lambda lin: K1Int4Linear(lin.weight, lin.bias))
    if fmt in ("slim", "slim_2_4_int4"):
        def make(lin):
            w = lin.weight.detach().float()
            mask = mask_2_4(w.abs())
            base = quantize_matrix(w * mask, "slim", 4)
            r = adapter_rank(tuple(w.shape), rank_ratio) if fmt == "slim" else 0
            if r == 0:
                return SlimLinear(CompressedWeight(base, mask, None, None), lin.bias, backend="kernel")
            e = w - base.dequantize()
            u, s, vh = torch.linalg.svd(e, full_matrices=False)
            cw = CompressedWeight(base, mask, u[:, :r] * s[:r], vh[:r])
            return SlimLinear(cw, lin.bias, backend="kernel")
        return _replace_linears(m, make)
    raise ValueError(f"unknown format {fmt!r}")


@torch.no_grad()
def decode_speed(model: nn.Module, prompt: torch.Tensor, new_tokens: int, repeats: int) -> float:
    """Greedy decode tokens/s (KV cache on), median over `repeats` generations after one warm-up."""
    model.eval()

    def run():
        model.generate(prompt, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                       pad_token_id=0)

    return prompt.shape[0] * new_tokens / median_time(run, repeats, warmup=1)


def memory_bytes(shapes: list[tuple[int, int]], rank_ratio: float, adapter_bits: int | None,
                 adapter_group_size: int, other_params: int) -> dict[str, float]:
    """Bytes of the dense fp16 model and of the SLiM-compressed one (2:4 int4 base, adapters, fp16 rest).

    The base counts what the K1 format stores (int4 values of kept entries, 2-bit positions, one fp32
    scale per row); adapters are fp16, or `adapter_bits` with one fp16 scale per group.
    """
    dense = 2.0 * (sum(n * k for n, k in shapes) + other_params)
    base = adapters = 0.0
    for n, k in shapes:
        base += n * -(-k // 4) + n * -(-k // 8) + 4 * n
        r = adapter_rank((n, k), rank_ratio) if rank_ratio > 0 else 0
        p = (n + k) * r
        if adapter_bits is None:
            adapters += 2.0 * p
        else:
            adapters += p * adapter_bits / 8 + 2.0 * (n * -(-r // adapter_group_size) + r * -(-k // adapter_group_size))
    compressed = base + adapters + 2.0 * other_params
    return {"dense_fp16": dense, "slim_base": base, "slim_adapters": adapters, "slim_total": compressed,
            "ratio": compressed / dense}


def llama_linear_shapes(hidden: int, intermediate: int, layers: int, kv_hidden: int | None = None) -> list[tuple[int, int]]:
    """(N, K) of every linear of a Llama decoder: q, k, v, o, gate, up, down per layer."""
    kv = kv_hidden or hidden
    per_layer = [(hidden, hidden), (kv, hidden), (kv, hidden), (hidden, hidden),
                 (intermediate, hidden), (intermediate, hidden), (hidden, intermediate)]
    return per_layer * layers


