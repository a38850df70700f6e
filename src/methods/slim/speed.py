"""Speed and memory of SLiM's compressed layers (Section 4.3), measured on the job's device (rule slim_speed).

- `layer_speed`: one linear layer at a given (N, K) (e.g. LLaMA-2-7B's shapes) and batch M: dense fp32,
  dense bf16, torch's int4 weight-only CPU kernel (`aten._weight_int4pack_mm_for_cpu`, group 128; CPU
  only), the project's compiled int4 kernel, and SLiM's 2:4 + int4 (+ rank-r adapters) kernel. Median
  wall time of `repeats` runs (on a GPU each run ends with a device synchronisation).
- `decode_speed`: greedy decode tokens/s of a causal LM with its linears in each format.
- `memory_bytes`: bytes each format stores for a set of linear shapes (+ the uncompressed rest of the model).
- `measure_speed`: the step: layers at the configured shapes, decode of the shared causal LM, memory ratios.
The paper's speedups are GPU numbers (RTX 3060, A100); at the tiny scale these are CPU ratios and are
reported as such; at paper scale the step runs on the job's GPU through the kernels' CUDA build.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from methods import kernels
from methods.common.io import log, write_json
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
        y = torch.ops.aten._weight_int4pack_mm_for_cpu(
            x.reshape(-1, shape[-1]).to(torch.bfloat16), self.packed, self.group_size, self.scales_zeros
        )
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(*shape[:-1], self.out_features).to(dtype)


class CompiledInt4Linear(nn.Module):
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


def random_slim_weight(n: int, k: int, rank_ratio: float, seed: int = 0, device="cpu") -> CompressedWeight:
    """A 2:4 + SLiM-Quant 4-bit weight with rank-r adapters of the right shapes (timing needs no real values);
    drawn on the CPU (the same numbers on every device), quantized on `device`."""
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(n, k, generator=g) / k**0.5
    mask = mask_2_4(w.abs())
    r = adapter_rank((n, k), rank_ratio) if rank_ratio > 0 else 0
    lora_l = torch.randn(n, r, generator=g).to(device) * 0.01 if r else None
    lora_r = torch.randn(r, k, generator=g).to(device) * 0.01 if r else None
    w, mask = w.to(device), mask.to(device)
    return CompressedWeight(quantize_matrix(w * mask, "absmax", 4), mask, lora_l, lora_r)


def _timer(device, repeats: int):
    """median_time of a call on `device`: on a GPU each call ends with a synchronisation (kernels are
    asynchronous), on the CPU the call itself."""
    device = torch.device(device)
    if device.type == "cuda":
        return lambda fn: median_time(lambda: (fn(), torch.cuda.synchronize(device)), repeats, warmup=2)
    return lambda fn: median_time(fn, repeats, warmup=2)


@torch.no_grad()
def layer_speed(n: int, k: int, m: int, rank_ratio: float, repeats: int, device="cpu") -> dict[str, float]:
    """Seconds per call of y = x W^T for each format at weight (N, K) and batch M, on `device`
    (torch's int4 kernel is a CPU kernel: timed on the CPU only)."""
    device = torch.device(device)
    g = torch.Generator().manual_seed(0)
    w = torch.randn(n, k, generator=g) / k**0.5
    x = torch.randn(m, k, generator=g)
    w, x = w.to(device), x.to(device)
    w16, x16 = w.to(torch.bfloat16), x.to(torch.bfloat16)
    t_int4 = TorchInt4Linear(w) if device.type == "cpu" else None
    compiled_int4 = kernels.quantize_int4_rtn(w, group_size=TORCH_INT4_GROUP)
    slim = SlimLinear(random_slim_weight(n, k, rank_ratio, device=device), backend="kernel")
    slim_base = SlimLinear(random_slim_weight(n, k, 0.0, device=device), backend="kernel")
    timed = _timer(device, repeats)
    out = {"dense_fp32": timed(lambda: F.linear(x, w)), "dense_bf16": timed(lambda: F.linear(x16, w16))}
    if t_int4 is not None:
        out["torch_int4"] = timed(lambda: t_int4(x16))
    out.update(
        {
            "compiled_int4": timed(lambda: kernels.int4_linear(x, compiled_int4)),
            "slim_2_4_int4": timed(lambda: slim_base(x)),
            "slim_2_4_int4_lora": timed(lambda: slim(x)),
        }
    )
    return out


def _replace_linears(model: nn.Module, make) -> nn.Module:
    from .compress import _set_module, target_linears

    for name, lin in target_linears(model).items():
        _set_module(model, name, make(lin))
    return model


def model_in_format(model: nn.Module, fmt: str, rank_ratio: float) -> nn.Module:
    """A copy of `model` whose target linears use `fmt`: dense_fp32 | dense_bf16 | torch_int4 | compiled_int4
    (our int4 kernel) | slim_2_4_int4 (SLiM's 2:4 + int4 base without adapters) | slim (with rank-r adapters).
    The compressed formats are built on the device the model is on."""
    import copy

    m = copy.deepcopy(model)
    if fmt == "dense_fp32":
        return m.float()
    if fmt == "dense_bf16":
        return m.to(torch.bfloat16)
    if fmt == "torch_int4":
        return _replace_linears(m, lambda lin: TorchInt4Linear(lin.weight, lin.bias))
    if fmt == "compiled_int4":
        return _replace_linears(m, lambda lin: CompiledInt4Linear(lin.weight, lin.bias))
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
    """Greedy decode tokens/s (KV cache on), median over `repeats` generations after one warm-up, on the
    device of the model (the prompt is moved there; on a GPU each generation ends with a synchronisation)."""
    model.eval()
    device = next(model.parameters()).device
    prompt = prompt.to(device)

    def run():
        model.generate(prompt, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False, pad_token_id=0)
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    return prompt.shape[0] * new_tokens / median_time(run, repeats, warmup=1)


def memory_bytes(
    shapes: list[tuple[int, int]],
    rank_ratio: float,
    adapter_bits: int | None,
    adapter_group_size: int,
    other_params: int,
) -> dict[str, float]:
    """Bytes of the dense fp16 model and of the SLiM-compressed one (2:4 int4 base, adapters, fp16 rest).

    The base counts what the compiled 2:4 + int4 format stores (int4 values of kept entries, 2-bit positions,
    one fp32 scale per row); adapters are fp16, or `adapter_bits` with one fp16 scale per group.
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
    return {
        "dense_fp16": dense,
        "slim_base": base,
        "slim_adapters": adapters,
        "slim_total": compressed,
        "ratio": compressed / dense,
    }


def llama_linear_shapes(
    hidden: int, intermediate: int, layers: int, kv_hidden: int | None = None
) -> list[tuple[int, int]]:
    """(N, K) of every linear of a Llama decoder: q, k, v, o, gate, up, down per layer."""
    kv = kv_hidden or hidden
    per_layer = [
        (hidden, hidden),
        (kv, hidden),
        (kv, hidden),
        (hidden, hidden),
        (intermediate, hidden),
        (intermediate, hidden),
        (hidden, intermediate),
    ]
    return per_layer * layers


# Formats of the end-to-end decode: dense fp32 / bf16, torch's int4 kernel (CPU only), our int4 kernel,
# SLiM's 2:4 + int4 base alone and with its rank-r adapters (both through our 2:4 + int4 kernel).
DECODE_FORMATS = ("dense_fp32", "dense_bf16", "torch_int4", "compiled_int4", "slim_2_4_int4", "slim")


def measure_speed(
    model_dir: str,
    shapes: list[list[int]],
    batch_sizes: list[int],
    rank_ratio: float,
    repeats: int,
    decode: dict,
    memory: dict,
    threads: int,
    out_json: str,
    device="cpu",
) -> None:
    """The slim_speed step: per-layer times at the configured shapes, decode tokens/s of the shared causal
    LM, memory ratios; timed on `device` (the job's GPU at paper scale)."""
    from methods.common.lm import load_causal_lm

    device = torch.device(device)
    torch.set_num_threads(threads)
    layers = []
    for n, k in shapes:
        for m in batch_sizes:
            t = layer_speed(n, k, m, rank_ratio, repeats, device)
            layers.append({"n": n, "k": k, "m": m, "seconds": t})
            log(f"layer {n}x{k}, M={m}: " + ", ".join(f"{f} {s * 1e3:.3f} ms" for f, s in t.items()))
    model, _ = load_causal_lm(model_dir, device=device)
    formats = [f for f in DECODE_FORMATS if device.type == "cpu" or f != "torch_int4"]
    batches = decode.get("batch_sizes", [1])
    prompts = {
        b: torch.randint(
            1, model.config.vocab_size, (b, decode["prompt_len"]), generator=torch.Generator().manual_seed(0)
        )
        for b in batches
    }
    by_batch = {str(b): {} for b in batches}
    for fmt in formats:  # each format built once (SLiM's adapters: an SVD per linear) and decoded at every batch
        m = model_in_format(model, fmt, rank_ratio)
        for b in batches:
            by_batch[str(b)][fmt] = decode_speed(m, prompts[b], decode["new_tokens"], decode["repeats"])
            log(f"decode batch {b}, {fmt}: {by_batch[str(b)][fmt]:.1f} tokens/s")
        del m  # one copy at a time beside the model (two copies of an 8B model fill a GPU)
    tokens_per_s = by_batch[str(min(decode.get("batch_sizes", [1])))]
    cfg = model.config
    kv = cfg.num_key_value_heads * (cfg.hidden_size // cfg.num_attention_heads)
    small_shapes = llama_linear_shapes(cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers, kv)
    small_other = sum(p.numel() for p in model.parameters()) - sum(n * k for n, k in small_shapes)
    big = memory["reference_model"]
    big_shapes = llama_linear_shapes(big["hidden"], big["intermediate"], big["layers"])
    big_other = 2 * big["vocab"] * big["hidden"] + (2 * big["layers"] + 1) * big["hidden"]
    mem_args = (rank_ratio, memory["adapter_bits"], memory["adapter_group_size"])
    write_json(
        out_json,
        {
            "device": str(device),
            "threads": threads,
            "compiled_kernels": kernels.extension_available(),
            "rank_ratio": rank_ratio,
            "layers": layers,
            "decode_tokens_per_s": tokens_per_s,
            "decode_tokens_per_s_by_batch": by_batch,
            "kernels_cpu_vnni": kernels.cpu_vnni_enabled(),
            "memory_small": memory_bytes(small_shapes, *mem_args, small_other),
            "memory_reference": {"model": big["name"], **memory_bytes(big_shapes, *mem_args, big_other)},
        },
    )
