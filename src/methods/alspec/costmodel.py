"""Decode latency of sequential execution vs two-worker ALSpec, from measured kernel times.

Per decode step of an L-layer model (Sec. 4 of the paper, one attention worker, speculation one
layer deep as in workers.py):

    sequential = L (t_qkv + t_attn(T) + t_rest) + t_head
    alspec(h)  = t_qkv + L [max(t_attn(T) + t_comm, t_spec + t_rest + t_qkv) + (1 - h)(t_rest + t_qkv)] + t_head

t_qkv: norm + q/k/v projection + RoPE; t_rest: o_proj + residual + norm + MLP; t_attn(T): exact
decode attention over T keys (measured contexts interpolated, extrapolated linearly to 128K);
t_spec: attention over the sink and window keys; t_comm: the measured round trip between the two
workers; h: hit rate. On a hit the rest of the layer and the next projection were already done
on the speculative worker while the exact attention ran; on a miss they are redone after o
arrives. "Attention overhead" is the part of the step latency beyond the non-attention work
L (t_qkv + t_rest) + t_head; the paper's 5x is the ratio of that overhead, sequential / ALSpec.
"""

from __future__ import annotations

import numpy as np
import torch

from methods.common.timing import median_time

from .engine import SpecDecoder


@torch.no_grad()
def measure_kernels(model, contexts, sink: int, window: int, repeats: int = 5, seed: int = 0) -> dict:
    """Single-thread median times of the pieces of one decode step of `model`'s first layer."""
    torch.manual_seed(seed)
    dec = SpecDecoder(model)
    layer = dec.layers[0]
    d = model.config.hidden_size
    h = torch.randn(1, 1, d)
    cos, sin = dec._rope(h, torch.zeros(1, 1, dtype=torch.long))
    q = torch.randn(1, dec.n_heads, dec.head_dim)
    o = torch.randn(1, dec.n_heads, dec.head_dim)
    out = {
        "t_qkv": median_time(lambda: dec._qkv(layer, h, cos, sin), repeats, warmup=2),
        "t_rest": median_time(lambda: dec.rest_of_layer(layer, h, o), repeats, warmup=2),
        "t_head": median_time(lambda: dec._logits(h), repeats, warmup=2),
        "n_layers": len(dec.layers),
        "contexts": list(map(int, contexts)),
        "t_attn": [],
        "t_spec": [],
    }
    for T in contexts:
        K = torch.randn(1, dec.n_kv, int(T), dec.head_dim)
        V = torch.randn_like(K)
        exact = lambda: dec.attend(q, K, V, _EXACT)  # noqa: E731  (same call as a decode step)
        out["t_attn"].append(median_time(exact, repeats, warmup=2))
        out["t_spec"].append(median_time(lambda: dec.speculative_attention(q, K, V, sink, window), repeats, warmup=2))
    return out


class _Exact:
    mode = "exact"


_EXACT = _Exact()


def fit_attention(kernels: dict) -> tuple[float, float]:
    """Least-squares t_attn(T) = a + b T over the measured contexts."""
    T = np.asarray(kernels["contexts"], float)
    b, a = np.polyfit(T, np.asarray(kernels["t_attn"], float), 1)
    return float(a), float(b)


def attention_time(kernels: dict, context) -> np.ndarray:
    """t_attn(T): the measured times interpolated piecewise-linearly, extrapolated beyond the largest
    measured context with the slope of the last two points (memory-bound: linear in T there)."""
    T = np.asarray(context, float)
    xs = np.asarray(kernels["contexts"], float)
    ys = np.asarray(kernels["t_attn"], float)
    slope = (ys[-1] - ys[-2]) / (xs[-1] - xs[-2])
    inside = np.interp(T, xs, ys)
    return np.where(T > xs[-1], ys[-1] + slope * (T - xs[-1]), inside)


def step_latency(kernels: dict, context, hit_rate: float, t_comm: float, mode: str) -> np.ndarray:
    """Modelled decode-step latency (seconds) at `context` (scalar or array) for 'sequential' or 'alspec'."""
    t_attn = attention_time(kernels, context)
    t_spec = float(np.median(kernels["t_spec"]))
    L, qkv, rest, head = kernels["n_layers"], kernels["t_qkv"], kernels["t_rest"], kernels["t_head"]
    if mode == "sequential":
        return L * (qkv + t_attn + rest) + head
    if mode != "alspec":
        raise ValueError(f"mode {mode!r}: expected 'sequential' or 'alspec'")
    per_layer = np.maximum(t_attn + t_comm, t_spec + rest + qkv) + (1 - hit_rate) * (rest + qkv)
    return qkv + L * per_layer + head


def attention_overhead(kernels: dict, context, hit_rate: float, t_comm: float, mode: str) -> np.ndarray:
    """Step latency beyond the non-attention work L (t_qkv + t_rest) + t_head."""
    base = kernels["n_layers"] * (kernels["t_qkv"] + kernels["t_rest"]) + kernels["t_head"]
    return step_latency(kernels, context, hit_rate, t_comm, mode) - base
