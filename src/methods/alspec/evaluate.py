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

import torch

from .engine import SpecConfig, SpecDecoder
from .tasks import Batch


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
    for name, spec in specs.items():
        tf, gen = [], []
        for sl in _chunks(batch.ids.shape[0], batch_size):
            ids = batch.ids[sl]
            tf.append(dec.run(ids, d0, spec))
            gen.append(dec.run(ids[:, : d0 + 1], d0, spec, n_generate=T - d0 - 1))
        cat = lambda runs, key: torch.cat([r[key] for r in runs], dim=0 if key in ("logits", "pred") else -1)  # noqa: E731
        out[name] = {
            "logits": cat(tf, "logits"), "pred": cat(tf, "pred"),
            "hits": torch.cat([r["hits"] for r in tf], -1), "approx": torch.cat([r["approx"] for r in tf], -1),
            "gen": cat(gen, "pred"), "gen_hits": torch.cat([r["hits"] for r in gen], -1),
        }
    return out


def task_metrics(batch: Batch, decoded: dict, kind: str) -> dict:
    """Metrics per mode. kind: 'accuracy' (answer positions) or 'perplexity' (every decoded token)."""
    d0 = batch.decode_start
    target = batch.ids[:, d0 + 1 :]                      # what steps 0 .. n-2 predict
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


def lm_batch(test_ids: torch.Tensor, n: int, context: int, decode: int) -> Batch:
    """LM continuation: the first `n` non-overlapping windows of `context` tokens of the test split;
    the last `decode` tokens of each window are decoded one by one."""
    if decode >= context:
        raise ValueError(f"lm continuation: decode ({decode}) must be shorter than context ({context})")
    avail = test_ids.numel() // context
    if avail < 1:
        raise ValueError(f"lm continuation: the test split has {test_ids.numel()} tokens, fewer than one "
                         f"window of {context}; lower alspec.lm.context")
    n = min(n, avail)
    ids = test_ids[: n * context].view(n, context).long()
    answer = torch.zeros_like(ids, dtype=torch.bool)
    answer[:, context - decode + 1 :] = True
    return Batch(ids, answer, context - decode)
