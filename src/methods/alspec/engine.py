"""Decode with a KV cache through HF Llama modules, with exact, static or speculative attention.

`SpecDecoder` drives a `transformers` LlamaForCausalLM layer by layer with its own modules
(q/k/v/o projections, RoPE, RMSNorms, MLP, lm_head), so the same code runs a tiny random model,
the pipeline's small Llama or a Llama-3 checkpoint at full scale. Prefill is ordinary causal
attention; every decode step attends with `methods.kernels` (the compiled ops):

- ``exact``: o = softmax attention over all T keys.
- ``static``: ô = attention over the first `sink` and last `window` keys only, always used
  (the StreamingLLM-style approximation the paper compares against).
- ``alspec``: Section 3 of the paper. ô is computed first and the operations after attention
  (o_proj, residual, post-attention norm, MLP: "the rest of the layer") are executed early on ô
  while the exact o is computed; verification accepts if ‖o − ô‖₂ < λ‖o‖₂ (per layer over all
  heads, or per head with `granularity="head"`); on a hit the speculative result is committed,
  on a miss it is discarded (rollback) and the rest of the layer is re-executed from o (per
  head: from o on the rejected heads and ô on the accepted ones). Each batch row is verified
  and rolled back on its own.
"""

from __future__ import annotations

import dataclasses

import torch
import torch.nn.functional as F

from methods.kernels import decode_attention, spec_decode_attention

MODES = ("exact", "static", "alspec")


@dataclasses.dataclass(frozen=True)
class SpecConfig:
    mode: str = "exact"  # exact | static | alspec
    sink: int = 8  # first keys of the speculative attention (attention sinks)
    window: int = 8  # last keys of the speculative attention (local window)
    lam: float = 0.10  # verification threshold λ
    granularity: str = "layer"  # layer: one verdict per layer; head: one per attention head

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"SpecConfig.mode: {self.mode!r} is not one of {MODES}")
        if self.granularity not in ("layer", "head"):
            raise ValueError(f"SpecConfig.granularity: {self.granularity!r} is not 'layer' or 'head'")
        if self.sink < 0 or self.window < 0 or self.lam < 0:
            raise ValueError(
                f"SpecConfig: sink, window and lam must be >= 0, got {self.sink}, {self.window}, {self.lam}"
            )


def verify(o: torch.Tensor, o_hat: torch.Tensor, lam: float, granularity: str = "layer") -> torch.Tensor:
    """Acceptance ‖o − ô‖₂ < λ‖o‖₂ (paper, Sec. 3.2) for o, ô [B, H, D]: [B] (layer) or [B, H] (head)."""
    dims = (-2, -1) if granularity == "layer" else (-1,)
    err = torch.linalg.vector_norm((o - o_hat).float(), dim=dims)
    return err < lam * torch.linalg.vector_norm(o.float(), dim=dims)


class KVCache:
    """Preallocated keys/values per layer, [B, H_kv, capacity, D]; `length` tokens are filled."""

    def __init__(self, n_layers, batch, kv_heads, head_dim, capacity, dtype, device):
        shape = (batch, kv_heads, capacity, head_dim)
        self.k = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(n_layers)]
        self.v = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(n_layers)]
        self.length = 0
        self.capacity = capacity

    def write(self, layer: int, k: torch.Tensor, v: torch.Tensor, start: int) -> None:
        t = k.shape[2]
        if start + t > self.capacity:
            raise ValueError(
                f"KVCache: {start + t} tokens exceed the capacity {self.capacity}; "
                "allocate the cache for prompt + new tokens"
            )
        self.k[layer][:, :, start : start + t] = k
        self.v[layer][:, :, start : start + t] = v

    def view(self, layer: int, length: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.k[layer][:, :, :length], self.v[layer][:, :, :length]

    def clone(self) -> "KVCache":
        """An independent copy (the same filled length and capacity), so one prefill serves several runs."""
        other = object.__new__(KVCache)
        other.k, other.v = [t.clone() for t in self.k], [t.clone() for t in self.v]
        other.length, other.capacity = self.length, self.capacity
        return other


@dataclasses.dataclass
class StepStats:
    """Per decode step: verdicts [L, B] (row hit at layer l) and the approximated fraction [L, B]."""

    hits: torch.Tensor
    approx: torch.Tensor


class SpecDecoder:
    """Prefill + decode steps of a LlamaForCausalLM with exact / static / ALSpec attention."""

    def __init__(self, model):
        if model.config.model_type != "llama":
            raise ValueError(
                f"ALSpec's decoder drives Llama blocks (RMSNorm, RoPE, o_proj, MLP) and got a "
                f"{type(model).__name__} (model_type {model.config.model_type!r}); for alspec set lm.model_id "
                "to a Llama-architecture model (smollm2-135m at the tiny scale, a Llama checkpoint at full scale)"
            )
        cfg = model.config
        self.model = model
        self.layers = model.model.layers
        self.n_heads = cfg.num_attention_heads
        self.n_kv = cfg.num_key_value_heads
        self.head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        self.groups = self.n_heads // self.n_kv
        self.scale = self.layers[0].self_attn.scaling

    # --- pieces of one layer -----------------------------------------------------------------
    def _qkv(self, layer, h, cos, sin):
        """Pre-attention work: RMSNorm, projections, RoPE. h [B, T, d] -> q [B, H, T, D], k, v [B, Hkv, T, D]."""
        from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

        attn = layer.self_attn
        x = layer.input_layernorm(h)
        B, T, _ = x.shape
        q = attn.q_proj(x).view(B, T, -1, self.head_dim).transpose(1, 2)
        k = attn.k_proj(x).view(B, T, -1, self.head_dim).transpose(1, 2)
        v = attn.v_proj(x).view(B, T, -1, self.head_dim).transpose(1, 2)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        return q, k, v

    @staticmethod
    def rest_of_layer(layer, h, o):
        """What follows attention in a Llama block: o_proj, residual, RMSNorm, MLP, residual. o [B, H, D]."""
        h = h + layer.self_attn.o_proj(o.flatten(-2).unsqueeze(1).to(h.dtype))
        return h + layer.mlp(layer.post_attention_layernorm(h))

    @staticmethod
    def sink_window(K, sink: int, window: int):
        """The keys (or values) the speculative attention reads: first `sink` and last `window` of [.., T, D]."""
        T = K.shape[2]
        if sink + window >= T:
            return K
        return torch.cat([K[:, :, :sink], K[:, :, T - window :]], dim=2)

    def speculative_attention(self, q, K, V, sink: int, window: int):
        """ô: attention of q [B, H, D] over the sink and window keys only (the rest is never touched)."""
        K, V = self.sink_window(K, sink, window), self.sink_window(V, sink, window)
        return decode_attention(q, self._expand(K), self._expand(V), sink, window, self.scale)

    def _expand(self, k):
        """GQA: the kv heads repeated for their query heads, [B, Hkv, T, D] -> [B, H, T, D]."""
        return k if self.groups == 1 else k.repeat_interleave(self.groups, dim=1)

    def _rope(self, h, positions):
        return self.model.model.rotary_emb(h, positions)

    def _logits(self, h):
        """Next-token logits [B, V] of the last position only (the output head on every prompt position
        would cost a vocabulary-sized matrix product per token for nothing)."""
        return self.model.lm_head(self.model.model.norm(h[:, -1:]))[:, -1].float()

    # --- prefill and decode ------------------------------------------------------------------
    @torch.no_grad()
    def prefill(self, ids: torch.Tensor, capacity: int) -> tuple[torch.Tensor, KVCache]:
        """Causal forward over the prompt ids [B, T] filling a new cache; returns last logits [B, V]."""
        B, T = ids.shape
        p = next(self.model.parameters())
        cache = KVCache(len(self.layers), B, self.n_kv, self.head_dim, capacity, p.dtype, p.device)
        h = self.model.model.embed_tokens(ids.to(p.device))
        cos, sin = self._rope(h, torch.arange(T, device=p.device)[None])
        for i, layer in enumerate(self.layers):
            q, k, v = self._qkv(layer, h, cos, sin)
            cache.write(i, k, v, 0)
            o = F.scaled_dot_product_attention(q, self._expand(k), self._expand(v), is_causal=True, scale=self.scale)
            h = h + layer.self_attn.o_proj(o.transpose(1, 2).reshape(B, T, -1))
            h = h + layer.mlp(layer.post_attention_layernorm(h))
        cache.length = T
        return self._logits(h), cache

    def attend(self, q, K, V, spec: SpecConfig):
        """(o, ô) of one decode query q [B, H, D] over the cache; o is None in static mode, ô None in exact."""
        if spec.mode == "static":
            return None, self.speculative_attention(q, K, V, spec.sink, spec.window)
        K, V = self._expand(K), self._expand(V)
        if spec.mode == "exact":
            return decode_attention(q, K, V, K.shape[2], 0, self.scale), None
        o, o_hat, _ = spec_decode_attention(q, K, V, spec.sink, spec.window, spec.lam, self.scale)
        return o, o_hat

    @torch.no_grad()
    def step(self, token: torch.Tensor, cache: KVCache, spec: SpecConfig) -> tuple[torch.Tensor, StepStats]:
        """Feed one token per row [B]; returns next-token logits [B, V] and the step's verification stats."""
        B = token.shape[0]
        p = next(self.model.parameters())
        pos = cache.length
        h = self.model.model.embed_tokens(token.to(p.device)[:, None])
        cos, sin = self._rope(h, torch.full((1, 1), pos, device=p.device))
        hits = torch.zeros(len(self.layers), B, dtype=torch.bool)
        approx = torch.zeros(len(self.layers), B)
        for i, layer in enumerate(self.layers):
            q, k, v = self._qkv(layer, h, cos, sin)
            cache.write(i, k, v, pos)
            o, o_hat = self.attend(q[:, :, 0], *cache.view(i, pos + 1), spec)
            if spec.mode == "exact":
                h = self.rest_of_layer(layer, h, o)
                continue
            speculative = self.rest_of_layer(layer, h, o_hat)  # executed before o is verified
            if spec.mode == "static":
                h, hits[i], approx[i] = speculative, True, 1.0
                continue
            h, hits[i], approx[i] = self._commit_or_rollback(layer, h, o, o_hat, speculative, spec)
        cache.length = pos + 1
        return self._logits(h), StepStats(hits, approx)

    def _commit_or_rollback(self, layer, h, o, o_hat, speculative, spec):
        """Keep the speculative rows whose verification passed; recompute the others from o."""
        accept = verify(o, o_hat, spec.lam, spec.granularity)  # [B] or [B, H]
        if spec.granularity == "head":
            hit = accept.all(-1)
            approx = accept.float().mean(-1)
            o_used = torch.where(accept[..., None], o_hat, o)
        else:
            hit, approx, o_used = accept, accept.float(), o
        out = speculative
        miss = (~hit).nonzero().flatten()
        if len(miss):
            out = speculative.clone()
            out[miss] = self.rest_of_layer(layer, h[miss], o_used[miss])  # rollback: re-execute from o
        return out, hit.cpu(), approx.cpu()

    # --- loops over steps ----------------------------------------------------------------------
    @torch.no_grad()
    def run(
        self, ids: torch.Tensor, decode_start: int, spec: SpecConfig, n_generate: int = 0, prefilled: KVCache = None
    ) -> dict:
        """Prefill ids[:, :decode_start], feed ids[:, decode_start:] one token per step (teacher forcing),
        then `n_generate` more steps that feed the model's own greedy prediction.

        Step s predicts position decode_start + 1 + s: `pred` [B, n_steps] and `logits` [B, n_steps, V]
        (the first T - decode_start - 1 columns are scored against ids[:, decode_start + 1 :], the rest
        are greedy generation); `hits` / `approx` are [n_steps, L, B]. `prefilled`: the cache of
        `prefill(ids[:, :decode_start])` (exact in every mode), copied instead of computed again."""
        B, T = ids.shape
        if not 0 < decode_start < T:
            raise ValueError(f"decode_start {decode_start} must lie in (0, {T}): at least one token is decoded")
        n_fed = T - decode_start
        if prefilled is None:
            _, cache = self.prefill(ids[:, :decode_start], capacity=T + n_generate)
        elif prefilled.length != decode_start or prefilled.capacity < T + n_generate:
            raise ValueError(
                f"run: the prefilled cache holds {prefilled.length} of {prefilled.capacity} tokens; "
                f"need {decode_start} of at least {T + n_generate}"
            )
        else:
            cache = prefilled.clone()
        logits, hits, approx = [], [], []
        for s in range(n_fed + n_generate):
            token = ids[:, decode_start + s] if s < n_fed else logits[-1].argmax(-1)
            out, stats = self.step(token, cache, spec)
            logits.append(out.cpu())
            hits.append(stats.hits)
            approx.append(stats.approx)
        logits = torch.stack(logits, 1)
        return {"logits": logits, "pred": logits.argmax(-1), "hits": torch.stack(hits), "approx": torch.stack(approx)}
