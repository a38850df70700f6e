"""The n-gram baselines the causal LM must beat, and the evaluation step (rule lm_evaluate).

- `ngram_counts` / `BigramModel`: unigram counts and the bigram counts of the pairs that occur, kept
  sparse (sorted pair keys and their counts) so that a 128K-token vocabulary (Llama-3) costs memory in
  the number of distinct pairs, not V^2 (a dense V x V table would be 131 GB).
- `BigramModel.log_prob`: log(lam * bigram ML + (1 - lam) * add-one unigram) (Jelinek-Mercer), the
  same numbers, operation for operation, as the dense table it replaces (tests/lm: bitwise equal).
- `bigram_baseline`: the interpolation weight that is best on validation (the baseline's best shot).
- `evaluate_model`: validation / test perplexity of the LM on the job's device next to both baselines on
  the same windows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import torch

from methods.common.io import log, read_json, write_json
from methods.common.lm.evaluate import _windows, perplexity, torch_threads
from methods.common.lm.model import load_causal_lm, load_token_splits


@dataclass
class BigramModel:
    """Counts of a token stream: unigrams [V], the distinct (prev, next) pairs as sorted keys prev * V + next
    with their counts, and each previous token's total (the row sums of the dense bigram table)."""

    uni: torch.Tensor
    keys: torch.Tensor
    counts: torch.Tensor
    rows: torch.Tensor
    vocab_size: int
    lam: float = 0.9

    def with_lambda(self, lam: float) -> "BigramModel":
        return BigramModel(self.uni, self.keys, self.counts, self.rows, self.vocab_size, lam)

    def unigram_probs(self) -> torch.Tensor:
        """Add-one unigram probabilities [V]."""
        return (self.uni + 1) / (self.uni.sum() + self.uni.numel())

    def log_prob(self, prev: torch.Tensor, nxt: torch.Tensor) -> torch.Tensor:
        """log p(nxt | prev), elementwise over index tensors of one shape."""
        p_uni = self.unigram_probs()[nxt]
        q = prev.long() * self.vocab_size + nxt.long()
        if self.keys.numel():
            idx = torch.searchsorted(self.keys, q).clamp_max(self.keys.numel() - 1)
            big = torch.where(self.keys[idx] == q, self.counts[idx], torch.zeros((), dtype=self.counts.dtype))
        else:
            big = torch.zeros(q.shape, dtype=torch.float64)
        rows = self.rows[prev]
        p_big = torch.where(rows > 0, big / rows.clamp_min(1), p_uni)
        return torch.log(self.lam * p_big + (1 - self.lam) * p_uni)


def ngram_counts(ids: torch.Tensor, vocab_size: int) -> BigramModel:
    """Unigram counts and the sparse bigram counts (previous token -> next token) of a token stream."""
    ids = ids.long()
    uni = torch.bincount(ids, minlength=vocab_size).double()
    keys, counts = torch.unique(ids[:-1] * vocab_size + ids[1:], sorted=True, return_counts=True)
    rows = torch.bincount(ids[:-1], minlength=vocab_size).double()
    return BigramModel(uni, keys, counts.double(), rows, vocab_size)


def ngram_perplexity(model: BigramModel, ids: torch.Tensor, seq_len: int, max_windows: int | None = None) -> float:
    """Perplexity of a bigram model under the LM protocol: the same non-overlapping windows and the
    same predicted positions (2..T of each window) as `perplexity`, so the two numbers compare."""
    w = _windows(ids, seq_len, max_windows)
    return math.exp(-model.log_prob(w[:, :-1], w[:, 1:]).mean().item())


def unigram_perplexity(uni: torch.Tensor, ids: torch.Tensor, seq_len: int, max_windows=None) -> float:
    p = torch.log((uni + 1) / (uni.sum() + uni.numel()))
    w = _windows(ids, seq_len, max_windows)
    return math.exp(-p[w[:, 1:]].mean().item())


def bigram_baseline(train_ids, val_ids, vocab_size: int, seq_len: int, lambdas=(0.5, 0.6, 0.7, 0.8, 0.9, 0.95)):
    """Bigram model fitted on train; the interpolation weight is the one that is best on validation
    (the baseline gets its best shot). Returns (model, lambda, validation perplexity, unigram counts)."""
    counts = ngram_counts(train_ids, vocab_size)
    best = None
    for lam in lambdas:
        model = counts.with_lambda(lam)
        ppl = ngram_perplexity(model, val_ids, seq_len)
        if best is None or ppl < best[2]:
            best = (model, lam, ppl)
    return best + (counts.uni,)


def evaluate_model(model_dir, tokens, eval_cfg: dict, metrics_path, device="cpu", threads: int = 1) -> dict:
    """Validation/test perplexity of the LM (on `device`) next to unigram and bigram baselines on the same
    windows (the baselines on the CPU)."""
    splits = load_token_splits(tokens)
    seq_len, max_windows = eval_cfg["seq_len"], eval_cfg.get("max_windows")
    with torch_threads(threads):
        model, _ = load_causal_lm(model_dir, device=device)
        vocab = model.config.vocab_size
        bigram, lam, _, uni = bigram_baseline(splits["train"], splits["validation"], vocab, seq_len)
        metrics = {
            "seq_len": seq_len,
            "max_windows": max_windows,
            "vocab_size": vocab,
            "bigram_lambda": lam,
            "n_parameters": sum(p.numel() for p in model.parameters()),
        }
        for split in ("validation", "test"):
            ids = splits[split]
            metrics[f"{split}_ppl"] = perplexity(model, ids, seq_len, eval_cfg.get("batch_size", 8), max_windows)
            metrics[f"{split}_bigram_ppl"] = ngram_perplexity(bigram, ids, seq_len, max_windows)
            metrics[f"{split}_unigram_ppl"] = unigram_perplexity(uni, ids, seq_len, max_windows)
            metrics[f"{split}_tokens"] = int(ids.numel())
    metrics["below_bigram"] = metrics["validation_ppl"] < metrics["validation_bigram_ppl"]
    info = read_json(Path(model_dir) / "training.json")
    metrics["train_seconds"] = info.get("train_seconds")
    write_json(metrics_path, metrics)
    log(
        f"validation perplexity {metrics['validation_ppl']:.2f} vs bigram {metrics['validation_bigram_ppl']:.2f}"
        f" (unigram {metrics['validation_unigram_ppl']:.2f})"
    )
    return metrics


def trivial_perplexities(splits: dict, vocab_size: int, seq_len: int, max_windows: int | None = None) -> dict:
    """The trivial next-token predictors a reviewer tries first, scored on the same test windows and positions
    as `perplexity` (so they compare with a compressed model's number): `uniform` (every token equally likely:
    the vocabulary size, exactly), `unigram` (add-one train-split frequencies, no context) and `bigram` (the
    previous token only; interpolation weight best on validation). Seconds on the CPU."""
    bigram, _, _, uni = bigram_baseline(splits["train"], splits["validation"], vocab_size, seq_len)
    test = splits["test"]
    return {
        "uniform": float(vocab_size),
        "unigram": unigram_perplexity(uni, test, seq_len, max_windows),
        "bigram": ngram_perplexity(bigram, test, seq_len, max_windows),
    }
