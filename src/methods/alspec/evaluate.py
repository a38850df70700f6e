"""Quality of exact, static and ALSpec decoding: task accuracy / perplexity, hit rate, agreement.

Every mode decodes the same examples through `SpecDecoder` (prefill exact, then one token per
step). Two passes per mode:
- teacher forced over the decode region: accuracy at the answer positions (synthetic tasks) or
  perplexity of the decoded tokens (LM continuation), hit rate (fraction of layer verifications
  accepted), fraction of attention approximated (heads using ô), and the per-step agreement of the
  greedy prediction with the exact mode's;
- free running: after the first decode token the model is fed its own greedy predictions;
  token-for-token agreement with the exact mode's generation is measured, never assumed (for the
  copy task this generation is also the task: exact-match of the copied string).
"""

from __future__ import annotations

import math
import time

import torch

from methods.common.io import log, write_json

from .engine import SpecConfig, SpecDecoder
from .tasks import TASKS, Batch, load_llama, make_batch, task_config


def mode_specs(lams, sink: int, window: int, granularity: str = "layer") -> dict[str, SpecConfig]:
    """The compared modes: exact, static sink+window, and ALSpec at each λ (named alspec_0.10 ...)."""
    specs = {"exact": SpecConfig("exact", sink, window), "static": SpecConfig("static", sink, window)}
    for lam in lams:
        specs[f"alspec_{lam:.2f}"] = SpecConfig("alspec", sink, window, float(lam), granularity)
    return specs


def _chunks(n: int, size: int):
    for i in range(0, n, size):
        yield slice(i, min(n, i + size))


def decode_modes(model, batch: Batch, specs: dict[str, SpecConfig], batch_size: int = 32) -> dict:
    """Run every mode on the batch in both passes; returns per mode the tensors the metrics need."""
    dec = SpecDecoder(model)
    T, d0 = batch.ids.shape[1], batch.decode_start
    out = {}
    chunks = list(_chunks(batch.ids.shape[0], batch_size))
    # the prompt's forward pass is exact in every mode: computed once per chunk, its cache copied per run
    prefilled = [dec.prefill(batch.ids[sl, :d0], capacity=T)[1] for sl in chunks]
    for name, spec in specs.items():
        tf, gen = [], []
        for sl, cache in zip(chunks, prefilled):
            ids = batch.ids[sl]
            tf.append(dec.run(ids, d0, spec, prefilled=cache))
            gen.append(dec.run(ids[:, : d0 + 1], d0, spec, n_generate=T - d0 - 1, prefilled=cache))
        cat = lambda runs, key: torch.cat([r[key] for r in runs], dim=0 if key in ("logits", "pred") else -1)  # noqa: E731
        out[name] = {
            "logits": cat(tf, "logits"),
            "pred": cat(tf, "pred"),
            "hits": torch.cat([r["hits"] for r in tf], -1),
            "approx": torch.cat([r["approx"] for r in tf], -1),
            "gen": cat(gen, "pred"),
            "gen_hits": torch.cat([r["hits"] for r in gen], -1),
        }
    return out


def task_metrics(batch: Batch, decoded: dict, kind: str) -> dict:
    """Metrics per mode. kind: 'accuracy' (answer positions) or 'perplexity' (every decoded token)."""
    d0 = batch.decode_start
    target = batch.ids[:, d0 + 1 :]  # what steps 0 .. n-2 predict
    mask = batch.answer[:, d0 + 1 :] if kind == "accuracy" else torch.ones_like(target, dtype=torch.bool)
    exact = decoded["exact"]
    rows = {}
    for name, r in decoded.items():
        n = target.shape[1]
        pred, logits = r["pred"][:, :n], r["logits"][:, :n]
        m = {
            "hit_rate": float(r["hits"].float().mean()),
            "approx_fraction": float(r["approx"].mean()),
            "hit_rate_by_layer": r["hits"].float().mean((0, 2)).tolist(),
            "agreement_teacher_forced": float((r["pred"] == exact["pred"]).float().mean()),
            "agreement_generation": float((r["gen"] == exact["gen"]).float().mean()),
            "generation_identical": float((r["gen"] == exact["gen"]).all(1).float().mean()),
            "n_sequences": int(target.shape[0]),
            "n_decode_steps": int(r["pred"].shape[1]),
        }
        if kind == "accuracy":
            m["accuracy"] = float((pred[mask] == target[mask]).float().mean())
            gen_target = batch.ids[:, d0 + 1 :]
            m["generation_accuracy"] = float((r["gen"][:, : gen_target.shape[1]] == gen_target)[mask].float().mean())
        else:
            nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), target, reduction="none")
            m["perplexity"] = float(math.exp(nll[mask].mean()))
            m["accuracy"] = float((pred[mask] == target[mask]).float().mean())
        rows[name] = m
    return rows


def _row_slice(decoded: dict, idx: slice) -> dict:
    """The decoded tensors of rows `idx` (logits / pred / gen have rows first, hits / approx rows last)."""
    first = ("logits", "pred", "gen")
    return {name: {k: (v[idx] if k in first else v[..., idx]) for k, v in r.items()} for name, r in decoded.items()}


def draw_metrics(batch: Batch, decoded: dict, kind: str, n_draws: int) -> list[dict]:
    """`task_metrics` on `n_draws` disjoint blocks of the examples (independent data draws: the examples are
    drawn independently, the LM windows are disjoint stretches of text), so that a claim can put an interval
    over draws on its margin. Fewer blocks if there are fewer examples than draws."""
    n = batch.ids.shape[0]
    k = max(1, min(int(n_draws), n))
    bounds = [round(i * n / k) for i in range(k + 1)]
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        sub = Batch(batch.ids[a:b], batch.answer[a:b], batch.decode_start)
        out.append(task_metrics(sub, _row_slice(decoded, slice(a, b)), kind))
    return out


def lm_batch(test_ids: torch.Tensor, n: int, context: int, decode: int) -> Batch:
    """LM continuation: the first `n` non-overlapping windows of `context` tokens of the test split;
    the last `decode` tokens of each window are decoded one by one."""
    if decode >= context:
        raise ValueError(f"lm continuation: decode ({decode}) must be shorter than context ({context})")
    avail = test_ids.numel() // context
    if avail < 1:
        raise ValueError(
            f"lm continuation: the test split has {test_ids.numel()} tokens, fewer than one "
            f"window of {context}; lower alspec.lm.context"
        )
    n = min(n, avail)
    ids = test_ids[: n * context].view(n, context).long()
    answer = torch.zeros_like(ids, dtype=torch.bool)
    answer[:, context - decode + 1 :] = True
    return Batch(ids, answer, context - decode)


# --- the steps --------------------------------------------------------------------------------------


def evaluate_task(
    model_dir,
    task: str,
    tasks: dict,
    sink: int,
    window: int,
    lams,
    granularity: str,
    n_examples: int,
    batch_size: int,
    seed: int,
    metrics_path,
    threads: int = 1,
    device="cpu",
    n_draws: int = 1,
) -> dict:
    """The alspec_evaluate step: exact / static / ALSpec on held-out examples of one synthetic task, on `device`."""
    torch.set_num_threads(threads)
    cfg = task_config(tasks, sink, window)
    batch = make_batch(task, cfg, n_examples, seed=2**20 + seed * 31 + TASKS.index(task))
    t0 = time.time()
    decoded = decode_modes(
        load_llama(model_dir, device), batch, mode_specs(lams, sink, window, granularity), batch_size
    )
    rows = task_metrics(batch, decoded, "accuracy")
    draws = draw_metrics(batch, decoded, "accuracy", n_draws)
    for name, m in rows.items():
        log(
            f"{task} {name}: accuracy {m['accuracy']:.3f} hit {m['hit_rate']:.3f} agree {m['agreement_generation']:.3f}"
        )
    doc = {
        "task": task,
        "kind": "accuracy",
        "context": cfg.seq_len,
        "sink": sink,
        "window": window,
        "decode_start": batch.decode_start,
        "modes": rows,
        "draws": draws,
        "seconds": time.time() - t0,
    }
    write_json(metrics_path, doc)
    return doc


def evaluate_lm(
    model_dir,
    test_text,
    sink: int,
    window: int,
    lams,
    granularity: str,
    n_windows: int,
    context: int,
    decode: int,
    batch_size: int,
    metrics_path,
    threads: int = 1,
    device="cpu",
    n_draws: int = 1,
) -> dict:
    """The alspec_evaluate_lm step: exact / static / ALSpec on continuations of real text by the pretrained
    LM (tiny scale: SmolLM2-135M, dequantized from its Q4_1 GGUF, on the Wikipedia test articles;
    full scale: lm.model_id): perplexity, hit rate per layer, agreement, on `device`. The `n_windows`
    windows of `context` tokens are evenly spaced over the test articles."""
    from methods.common.lm import load_causal_lm
    from methods.common.lm.wikipedia import spread_windows, wikipedia_tokens

    torch.set_num_threads(threads)
    model, tokenizer = load_causal_lm(model_dir, device=device)
    if context > model.config.max_position_embeddings:
        raise ValueError(
            f"config alspec.lm.context ({context}) exceeds the pretrained LM's max_position_embeddings "
            f"({model.config.max_position_embeddings}, {model_dir}); lower alspec.lm.context"
        )
    windows = spread_windows(wikipedia_tokens(tokenizer, test_text), context, n_windows)
    batch = lm_batch(windows.reshape(-1), windows.shape[0], context, decode)
    t0 = time.time()
    decoded = decode_modes(model, batch, mode_specs(lams, sink, window, granularity), batch_size)
    rows = task_metrics(batch, decoded, "perplexity")
    draws = draw_metrics(batch, decoded, "perplexity", n_draws)
    for name, m in rows.items():
        log(f"lm {name}: ppl {m['perplexity']:.3f} hit {m['hit_rate']:.3f} agree {m['agreement_generation']:.3f}")
    doc = {
        "task": "lm",
        "kind": "perplexity",
        "model_dir": str(model_dir),
        "context": context,
        "sink": sink,
        "window": window,
        "decode_start": batch.decode_start,
        "modes": rows,
        "draws": draws,
        "seconds": time.time() - t0,
    }
    write_json(metrics_path, doc)
    return doc
