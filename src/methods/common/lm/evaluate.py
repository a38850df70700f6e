"""Evaluation and calibration helpers shared by the LLM-compression papers (NestQuant, SLiM, ALSpec).

- `perplexity`: the protocol of the quantization literature (GPTQ, QuaRot, NestQuant): the token
  stream is cut into non-overlapping windows of `seq_len` tokens, each window is scored on its own
  (no context carried over), perplexity = exp(mean next-token NLL over all predicted positions).
- `calibration_windows`: random windows of the training split (GPTQ's calibration sample).
- `capture_linear_inputs`: forward hooks on every nn.Linear collecting X^T X / n (the proxy Hessian
  of GPTQ / LDLQ / SparseGPT) and the per-feature mean of x^2 (Wanda's ||X_j||^2 / n).
"""

from __future__ import annotations

import contextlib
import math
from typing import Iterable, Iterator, Mapping

import torch
import torch.nn.functional as F
from tqdm import tqdm


def _windows(ids: torch.Tensor, seq_len: int, max_windows: int | None) -> torch.Tensor:
    if ids.dim() != 1:
        raise ValueError(f"perplexity: ids must be a 1-D token stream, got shape {tuple(ids.shape)}")
    if seq_len < 2:
        raise ValueError(f"perplexity: seq_len must be >= 2, got {seq_len}")
    n = ids.numel() // seq_len
    if max_windows is not None:
        n = min(n, int(max_windows))
    if n == 0:
        raise ValueError(
            f"perplexity: {ids.numel()} tokens are fewer than one window of seq_len={seq_len}; "
            "lower seq_len or use a longer split"
        )
    return ids[: n * seq_len].view(n, seq_len)


@torch.no_grad()
def perplexity(
    model, ids: torch.Tensor, seq_len: int, batch_size: int = 8, max_windows: int | None = None, progress: bool = False
) -> float:
    """Perplexity of `model` on non-overlapping windows of `ids` (first `max_windows` windows if given)."""
    windows = _windows(ids.long(), seq_len, max_windows)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    nll, count = 0.0, 0
    batches = range(0, windows.shape[0], batch_size)
    for start in tqdm(batches, desc="perplexity", disable=not progress, mininterval=5):
        x = windows[start : start + batch_size].to(device)  # (B, T)
        logits = model(input_ids=x).logits[:, :-1].float()  # (B, T-1, V)
        nll += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1), reduction="sum").item()
        count += x[:, 1:].numel()
    model.train(was_training)
    return math.exp(nll / count)


def calibration_windows(ids: torch.Tensor, n: int, seq_len: int, seed: int, bos: int | None = None) -> torch.Tensor:
    """`n` windows of `seq_len` tokens starting at uniform random offsets of `ids` -> LongTensor [n, seq_len].
    With `bos` (a model that starts every text with it, `wikipedia.window_bos`), each window is `bos`
    followed by seq_len - 1 tokens from its offset."""
    text_len = seq_len - (bos is not None)
    if ids.numel() <= text_len:
        raise ValueError(f"calibration_windows: {ids.numel()} tokens, need more than seq_len={seq_len}")
    g = torch.Generator().manual_seed(int(seed))
    starts = torch.randint(0, ids.numel() - text_len, (n,), generator=g)
    return with_bos(torch.stack([ids[s : s + text_len] for s in starts.tolist()]).long(), bos)


def with_bos(windows: torch.Tensor, bos: int | None) -> torch.Tensor:
    """[n, L] windows -> [n, L + 1] with `bos` in front of each; unchanged when bos is None."""
    if bos is None:
        return windows
    return torch.cat([torch.full((windows.shape[0], 1), int(bos), dtype=windows.dtype), windows], dim=1)


class _Accumulator:
    """Running X^T X and sum of x^2 over the rows that the current mask keeps."""

    def __init__(self, stats, dtype):
        self.stats, self.dtype = stats, dtype
        self.xtx = self.sq = None
        self.n = 0

    def add(self, x: torch.Tensor, mask: torch.Tensor | None) -> None:
        # the mask applies to token positions (B, T); inputs of other shapes (BERT's pooler) keep all rows
        if mask is not None and tuple(x.shape[:-1]) == tuple(mask.shape):
            x = x[mask.to(x.device).bool()]
        x = x.detach().reshape(-1, x.shape[-1])
        x = x.to(self.dtype)
        # in place: one [K, K] sum per linear, never two (a pretrained LM's 210 Hessians are 0.5 GB in float32)
        if "hessian" in self.stats:
            if self.xtx is None:
                self.xtx = x.T @ x
            else:
                self.xtx += x.T @ x
        if "mean_sq" in self.stats:
            s = (x * x).sum(0)
            if self.sq is None:
                self.sq = s
            else:
                self.sq += s
        self.n += x.shape[0]

    def result(self) -> dict:
        """The means, divided in place: the accumulator is spent."""
        out = {}
        n = max(self.n, 1)
        if "hessian" in self.stats:
            out["hessian"] = self.xtx.div_(n)
        if "mean_sq" in self.stats:
            out["mean_sq"] = self.sq.div_(n)
        out["n"] = self.n
        return out


def _batches(windows, batch_size: int) -> Iterator[dict]:
    if isinstance(windows, torch.Tensor):
        for start in range(0, windows.shape[0], batch_size):
            yield {"input_ids": windows[start : start + batch_size]}
    else:
        for batch in windows:
            if not isinstance(batch, Mapping):
                raise TypeError(
                    "capture_linear_inputs: windows must be a LongTensor [n, T] or an iterable of "
                    f"dicts of model inputs, got an item of type {type(batch).__name__}"
                )
            yield dict(batch)


@torch.no_grad()
def capture_linear_inputs(
    model,
    windows: torch.Tensor | Iterable[Mapping],
    stats=("hessian", "mean_sq"),
    names: Iterable[str] | None = None,
    batch_size: int = 8,
    dtype: torch.dtype = torch.float64,
    progress: bool = False,
) -> dict:
    """Statistics of the inputs of every nn.Linear (or of `names`) over the calibration `windows`.

    Returns {module_name: {"hessian": X^T X / n [K, K], "mean_sq": mean of x^2 [K], "n": rows}}.
    Padding positions (attention_mask == 0 in dict batches) are left out of the statistics.
    """
    unknown = set(stats) - {"hessian", "mean_sq"}
    if unknown:
        raise ValueError(f"capture_linear_inputs: unknown stats {sorted(unknown)}; allowed: hessian, mean_sq")
    wanted = None if names is None else set(names)
    accs, handles = {}, []
    state = {"mask": None}

    def hook(name):
        def fn(module, args):
            accs[name].add(args[0], state["mask"])

        return fn

    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear) and (wanted is None or name in wanted):
            accs[name] = _Accumulator(stats, dtype)
            handles.append(module.register_forward_pre_hook(hook(name)))
    if wanted is not None and wanted - set(accs):
        raise ValueError(f"capture_linear_inputs: no nn.Linear named {sorted(wanted - set(accs))}")
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        for batch in tqdm(list(_batches(windows, batch_size)), desc="calibration", disable=not progress):
            batch = {k: v.to(device) for k, v in batch.items()}
            state["mask"] = batch.get("attention_mask")
            model(**batch)
    finally:
        for h in handles:
            h.remove()
        model.train(was_training)
    return {name: acc.result() for name, acc in accs.items()}


@contextlib.contextmanager
def torch_threads(n: int | None):
    """Run a block with `n` intra-op threads (the rule's `threads`), restoring the previous setting."""
    old = torch.get_num_threads()
    if n:
        torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(old)
