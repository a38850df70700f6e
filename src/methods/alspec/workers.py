"""ALSpec on two workers: exact attention on one process, the speculative rest of the model on the other.

Two processes, one core and one thread each, talk through torch.distributed (gloo, TCP on the
loopback). Both prefill the prompt (the same deterministic code, so both hold the same KV cache);
then for every decode step and layer l:

- main worker (rank 0): RMSNorm + q/k/v projection + RoPE, writes k, v into its cache, sends
  (q, k, v) to the attention worker, and while that worker runs exact attention it computes the
  speculative ô (first `sink` and last `window` keys), executes the rest of layer l on ô
  (o_proj, residual, norm, MLP) and the next layer's q/k/v projection (Sec. 4 of the paper:
  the operations after attention launched early on another device). Then it receives o, verifies
  ‖o − ô‖ < λ‖o‖ and commits the speculative work on a hit or re-executes it from o on a miss.
- attention worker (rank 1): appends k, v to its cache, computes exact attention o, sends it back.

The control flow per layer follows `SpecDecoder._commit_or_rollback`, so the two-worker run
returns the tokens of the single-process run. `hit_schedule` (timing only) overrides the
verdicts with a fixed pattern, to measure latency as a function of the hit rate on a model
whose real hit rate is whatever it is; verification is still computed so its cost is counted.
"""

from __future__ import annotations

import os
import socket
import statistics
import tempfile
import time

import torch
import torch.distributed as dist

from methods.kernels import decode_attention

from .engine import SpecConfig, SpecDecoder, verify


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pin(rank: int) -> None:
    """One thread, one core per worker (where the OS lets us choose the core)."""
    torch.set_num_threads(1)
    if hasattr(os, "sched_setaffinity"):
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cores[rank % len(cores)]})


def _load(model_source):
    """A LlamaForCausalLM from a save_pretrained directory (the worker loads its own copy)."""
    from transformers import LlamaForCausalLM

    model = LlamaForCausalLM.from_pretrained(model_source, dtype=torch.float32)
    return model.eval()


# --- the two sides of one decode step -----------------------------------------------------------


def _attention_side(dec: SpecDecoder, cache, n_steps: int) -> None:
    """Rank 1: receive (q, k, v) per layer, extend the cache, return exact attention o."""
    H, Hkv, D = dec.n_heads, dec.n_kv, dec.head_dim
    for _ in range(n_steps):
        pos = cache.length
        for i in range(len(dec.layers)):
            buf = torch.empty(cache.k[0].shape[0], (H + 2 * Hkv) * D)
            dist.recv(buf, src=0)
            q, k, v = buf.split([H * D, Hkv * D, Hkv * D], dim=1)
            B = buf.shape[0]
            cache.write(i, k.view(B, Hkv, 1, D), v.view(B, Hkv, 1, D), pos)
            K, V = cache.view(i, pos + 1)
            o = decode_attention(q.view(B, H, D), dec._expand(K), dec._expand(V), pos + 1, 0, dec.scale)
            dist.send(o.contiguous(), dst=0)
        cache.length = pos + 1


def _main_step(dec: SpecDecoder, token, cache, spec: SpecConfig, forced=None):
    """Rank 0: one decode step with exact attention remote and the speculative work local.

    forced: None (real verification) or a bool tensor [L] of verdicts (timing runs)."""
    p = next(dec.model.parameters())
    pos = cache.length
    h = dec.model.model.embed_tokens(token[:, None])
    cos, sin = dec._rope(h, torch.full((1, 1), pos, device=p.device))
    hits = torch.zeros(len(dec.layers), token.shape[0], dtype=torch.bool)
    q, k, v = dec._qkv(dec.layers[0], h, cos, sin)
    for i, layer in enumerate(dec.layers):
        B = h.shape[0]
        cache.write(i, k, v, pos)
        req = dist.isend(torch.cat([q.reshape(B, -1), k.reshape(B, -1), v.reshape(B, -1)], 1), dst=1)
        K, V = cache.view(i, pos + 1)
        o_hat = dec.speculative_attention(q[:, :, 0], K, V, spec.sink, spec.window)
        speculative = dec.rest_of_layer(layer, h, o_hat)
        nxt = dec.layers[i + 1] if i + 1 < len(dec.layers) else None
        spec_qkv = dec._qkv(nxt, speculative, cos, sin) if nxt is not None else None
        o = torch.empty_like(o_hat)
        req.wait()
        dist.recv(o, src=1)
        if forced is None:
            h_new, hit, _ = dec._commit_or_rollback(layer, h, o, o_hat, speculative, spec)
        else:
            verify(o, o_hat, spec.lam, spec.granularity)  # counted, then overridden
            hit = torch.full((B,), bool(forced[i]))
            h_new = speculative if forced[i] else dec.rest_of_layer(layer, h, o)
        hits[i] = hit
        if nxt is not None:
            q, k, v = spec_qkv if bool(hit.all()) else dec._qkv(nxt, h_new, cos, sin)
        h = h_new
    cache.length = pos + 1
    return dec._logits(h), hits


# --- entry points ---------------------------------------------------------------------------------


def _init(rank: int, port: int) -> None:
    _pin(rank)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)


def _decode_worker(rank, port, model_source, ids, decode_start, n_generate, spec, result_path):
    _init(rank, port)
    try:
        dec = SpecDecoder(_load(model_source))
        T = ids.shape[1]
        with torch.no_grad():
            _, cache = dec.prefill(ids[:, :decode_start], capacity=T + n_generate)
            n_steps = T - decode_start + n_generate
            if rank == 1:
                _attention_side(dec, cache, n_steps)
                return
            preds, hits = [], []
            for s in range(n_steps):
                token = ids[:, decode_start + s] if decode_start + s < T else preds[-1]
                logits, hit = _main_step(dec, token, cache, spec)
                preds.append(logits.argmax(-1))
                hits.append(hit)
            torch.save({"pred": torch.stack(preds, 1), "hits": torch.stack(hits)}, result_path)
    finally:
        dist.destroy_process_group()


def two_worker_decode(
    model_source, ids: torch.Tensor, decode_start: int, spec: SpecConfig, n_generate: int = 0
) -> dict:
    """`SpecDecoder.run` (pred, hits) computed by two processes; spec.mode must be 'alspec'."""
    import torch.multiprocessing as mp

    if spec.mode != "alspec":
        raise ValueError(f"two_worker_decode runs ALSpec; got mode {spec.mode!r}")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "result.pt")
        mp.spawn(
            _decode_worker,
            args=(free_port(), str(model_source), ids, decode_start, n_generate, spec, path),
            nprocs=2,
            join=True,
        )
        return torch.load(path)


def _timing_worker(rank, port, model_source, context, n_steps, repeats, hit_rates, spec, seed, result_path):
    """Rank 0 times sequential single-core decode, then the two-worker decode at each forced hit rate."""
    _init(rank, port)
    try:
        dec = SpecDecoder(_load(model_source))
        L = len(dec.layers)
        g = torch.Generator().manual_seed(seed)
        ids = torch.randint(0, dec.model.config.vocab_size, (1, context), generator=g)
        schedules = {h: torch.rand(repeats, n_steps, L, generator=g) < h for h in hit_rates}
        result = {"sequential": [], "alspec": {h: [] for h in hit_rates}, "ping_pong": []}
        with torch.no_grad():
            if rank == 0:  # the baseline: one core, everything in sequence, exact attention
                exact = SpecConfig("exact", spec.sink, spec.window)
                for _ in range(repeats):
                    _, cache = dec.prefill(ids, capacity=context + n_steps)
                    for s in range(n_steps):
                        t0 = time.perf_counter()
                        dec.step(ids[:, s], cache, exact)
                        result["sequential"].append(time.perf_counter() - t0)
            dist.barrier()
            msg = torch.zeros(1, dec.n_heads * dec.head_dim)
            for _ in range(50):  # round trip of one attention output
                t0 = time.perf_counter()
                if rank == 0:
                    dist.send(msg, dst=1)
                    dist.recv(msg, src=1)
                else:
                    dist.recv(msg, src=0)
                    dist.send(msg, dst=0)
                result["ping_pong"].append(time.perf_counter() - t0)
            for h in hit_rates:
                for r in range(repeats):
                    _, cache = dec.prefill(ids, capacity=context + n_steps)
                    dist.barrier()
                    if rank == 1:
                        _attention_side(dec, cache, n_steps)
                        continue
                    for s in range(n_steps):
                        t0 = time.perf_counter()
                        _main_step(dec, ids[:, s], cache, spec, forced=schedules[h][r, s])
                        result["alspec"][h].append(time.perf_counter() - t0)
        if rank == 0:
            torch.save(result, result_path)
    finally:
        dist.destroy_process_group()


def time_two_workers(
    model_source, context: int, n_steps: int, repeats: int, hit_rates, spec: SpecConfig, seed: int = 0
) -> dict:
    """Median decode-step latency: sequential single core vs two-worker ALSpec at each hit rate."""
    import torch.multiprocessing as mp

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "timing.pt")
        mp.spawn(
            _timing_worker,
            args=(free_port(), str(model_source), context, n_steps, repeats, list(hit_rates), spec, seed, path),
            nprocs=2,
            join=True,
        )
        raw = torch.load(path)
    seq = statistics.median(raw["sequential"])
    rows = []
    for h in hit_rates:
        lat = statistics.median(raw["alspec"][h])
        rows.append({"hit_rate": float(h), "alspec_s": lat, "speedup": seq / lat, "alspec_all_s": raw["alspec"][h]})
    return {
        "context": context,
        "n_steps": n_steps,
        "repeats": repeats,
        "sequential_s": seq,
        "sequential_all_s": raw["sequential"],
        "comm_round_trip_s": statistics.median(raw["ping_pong"]),
        "by_hit_rate": rows,
    }
