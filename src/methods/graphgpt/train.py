"""Pre-training (NTP, SMTP) and fine-tuning loops for GET, and the GINE baseline's loop.

Sequences come from pools of precomputed random serializations (`n_views` per graph, see
pipeline.serialize_domain): each step draws one view per graph, the augmentation the paper gets
from random Eulerian paths, start nodes and index offsets.
"""
from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from methods.common.config import check_keys

from .model import GET, GINE, GETConfig, GETPredictor

PAD_ID, BOS_ID, MASK_ID = 0, 1, 3  # positions of <pad>, <bos>, <mask> in serialize.SPECIAL


@dataclass
class TrainConfig:
    steps: int = 500
    batch_size: int = 64
    lr: float = 1e-3
    warmup: int = 50
    weight_decay: float = 0.01
    eval_every: int = 100        # fine-tuning: validation interval (the best validation step is kept)
    eval_views: int = 4          # fine-tuning: predictions averaged over this many serializations

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        check_keys(cls, d)
        return cls(**d)


def device() -> torch.device:
    """The GPU where torch has one (full scale), else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def get_lr(step: int, cfg: TrainConfig) -> float:
    """Linear warm-up, then cosine decay to 10% of the peak."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def make_optimizer(model: torch.nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    return torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)


def pad_batch(seqs: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded (B, T) token ids and the (B, T) pad mask."""
    T = max(len(s) for s in seqs)
    tokens = torch.full((len(seqs), T), PAD_ID, dtype=torch.long)
    for i, s in enumerate(seqs):
        tokens[i, : len(s)] = torch.as_tensor(s)
    return tokens, tokens == PAD_ID


def draw_views(views: list[list[list[int]]], idx, rng: np.random.Generator) -> list[list[int]]:
    """One random serialization of each graph in `idx`."""
    return [views[i][int(rng.integers(len(views[i])))] for i in idx]


# --- pre-training ------------------------------------------------------------------------------

def smtp_mask_ratio(n: int, generator: torch.Generator) -> torch.Tensor:
    """Scheduled mask ratio of SMTP: 0.5 + 0.5 cos(pi r), r ~ U(0, 1) (paper, Section 3.3)."""
    r = torch.rand(n, generator=generator)
    return 0.5 + 0.5 * torch.cos(math.pi * r)


def smtp_corrupt(tokens: torch.Tensor, pad: torch.Tensor, generator: torch.Generator):
    """Mask ceil(ratio * L) of the L maskable tokens of each sequence (all but <bos> and padding).

    Returns the corrupted input, the targets (-100 where not masked) and the ratios drawn.
    """
    B, T = tokens.shape
    maskable = ~pad & (tokens != BOS_ID)
    ratio = smtp_mask_ratio(B, generator)
    n_mask = torch.clamp(torch.ceil(ratio * maskable.sum(1)), min=1).long()
    scores = torch.rand(B, T, generator=generator).masked_fill(~maskable, 2.0)
    rank = scores.argsort(1).argsort(1)  # rank of each position among the maskable ones
    masked = (rank < n_mask[:, None]) & maskable
    inputs = tokens.masked_fill(masked, MASK_ID)
    targets = tokens.masked_fill(~masked, -100)
    return inputs, targets, ratio


def pretrain_loss(model: GET, tokens: torch.Tensor, pad: torch.Tensor, objective: str,
                  generator: torch.Generator) -> torch.Tensor:
    """NTP: cross-entropy of every next token (decoder). SMTP: of the masked tokens (encoder)."""
    dev = next(model.parameters()).device
    if objective == "ntp":
        tokens, pad = tokens.to(dev), pad.to(dev)
        logits = model.lm_logits(model(tokens, pad)[:, :-1])
        targets = tokens[:, 1:].masked_fill(pad[:, 1:], -100)
    elif objective == "smtp":
        inputs, targets, _ = smtp_corrupt(tokens, pad, generator)  # on the CPU, with its generator
        logits = model.lm_logits(model(inputs.to(dev), pad.to(dev)))
        targets = targets.to(dev)
    else:
        raise ValueError(f"pre-training objective {objective!r}: expected 'ntp' or 'smtp'")
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)


def pretrain(views, vocab_size: int, objective: str, model_cfg: dict, cfg: TrainConfig, seed: int):
    """Pre-train GET on a pool of serializations; returns the model and the loss history."""
    rng, gen = np.random.default_rng(seed), torch.Generator().manual_seed(seed)
    model = GET(GETConfig(vocab_size=vocab_size, causal=(objective == "ntp"), **model_cfg)).to(device())
    opt = make_optimizer(model, cfg)
    history, t0 = [], time.time()
    for step in tqdm(range(cfg.steps), desc=f"pretrain {objective}", mininterval=10):
        for group in opt.param_groups:
            group["lr"] = get_lr(step, cfg)
        idx = rng.integers(len(views), size=cfg.batch_size)
        tokens, pad = pad_batch(draw_views(views, idx, rng))
        loss = pretrain_loss(model, tokens, pad, objective, gen)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        history.append(loss.item())
    return model, {"loss": history, "seconds": time.time() - t0}


# --- fine-tuning -------------------------------------------------------------------------------

def task_loss(out: torch.Tensor, y: torch.Tensor, kind: str) -> torch.Tensor:
    return F.mse_loss(out.squeeze(-1), y) if kind == "regression" else F.cross_entropy(out, y.long())


def metric(pred: np.ndarray, y: np.ndarray, kind: str) -> float:
    """MAE for regression (in the label's units), accuracy for classification."""
    if kind == "regression":
        return float(np.mean(np.abs(pred - y)))
    return float(np.mean(pred == y))


def finetune(model: torch.nn.Module, predict_batch, evaluate, idx_train, idx_val, y: np.ndarray, kind: str,
             cfg: TrainConfig, rng: np.random.Generator):
    """Generic loop: `predict_batch(idx, train=True)` -> outputs; `evaluate(idx, mu, sd)` -> metric.

    Regression targets are standardised with the training split's mean and std. The state with
    the best validation metric is kept (lower MAE / higher accuracy).
    """
    model_params = list(model.parameters())
    opt = torch.optim.AdamW(model_params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    mu, sd = (float(y[idx_train].mean()), float(y[idx_train].std() + 1e-8)) if kind == "regression" else (0.0, 1.0)
    yt = torch.as_tensor((y - mu) / sd, dtype=torch.float32)
    better = (lambda a, b: a < b) if kind == "regression" else (lambda a, b: a > b)
    best, history = None, {"loss": [], "val": []}
    for step in tqdm(range(cfg.steps), desc="finetune", mininterval=10):
        for group in opt.param_groups:
            group["lr"] = get_lr(step, cfg)
        idx = rng.choice(idx_train, size=cfg.batch_size)
        out = predict_batch(idx, train=True)
        loss = task_loss(out, yt[idx].to(out.device), kind)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model_params, 1.0)
        opt.step()
        history["loss"].append(loss.item())
        if (step + 1) % cfg.eval_every == 0 or step + 1 == cfg.steps:
            val = evaluate(idx_val, mu, sd)
            history["val"].append([step + 1, val])
            if best is None or better(val, best[0]):
                best = (val, step + 1, copy.deepcopy(model.state_dict()))
    return best, history, (mu, sd)


class GETTask:
    """Fine-tuning GET on one task's pool of serializations."""

    def __init__(self, backbone: GET, views, kind: str, n_out: int, cfg: TrainConfig, seed: int):
        self.model = GETPredictor(backbone, n_out).to(device())
        self.views, self.kind, self.cfg = views, kind, cfg
        self.rng = np.random.default_rng(seed)

    def outputs(self, seqs) -> torch.Tensor:
        tokens, pad = pad_batch(seqs)
        dev = next(self.model.parameters()).device
        return self.model(tokens.to(dev), pad.to(dev))

    def predict_batch(self, idx, train=True):
        self.model.train(train)
        return self.outputs(draw_views(self.views, idx, self.rng))

    @torch.no_grad()
    def predict(self, idx, mu: float, sd: float) -> np.ndarray:
        """Predictions averaged over `eval_views` serializations (the first views, fixed)."""
        self.model.eval()
        outs = []
        for k in range(self.cfg.eval_views):
            chunk = []
            for s in range(0, len(idx), 256):
                seqs = [self.views[i][k % len(self.views[i])] for i in idx[s:s + 256]]
                chunk.append(self.outputs(seqs))
            outs.append(torch.cat(chunk))
        return _finish(torch.stack(outs).mean(0), self.kind, mu, sd)


def _finish(out: torch.Tensor, kind: str, mu: float, sd: float) -> np.ndarray:
    out = out.detach().cpu()
    if kind == "regression":
        return out.squeeze(-1).numpy() * sd + mu
    return out.argmax(-1).numpy()


class GINTask:
    """Fine-tuning (training) the GINE baseline on one task's graphs."""

    def __init__(self, graphs, queries, kind: str, n_out: int, n_tokens: int, gin_cfg: dict, seed: int):
        self.model = GINE(n_tokens, n_out, **gin_cfg).to(device())
        self.graphs, self.queries, self.kind = graphs, queries, kind

    def batch(self, idx):
        xs, eis, eas, batch, query, offset = [], [], [], [], [], 0
        for b, i in enumerate(idx):
            x, ei, ea = self.graphs[i]
            xs.append(x), eis.append(ei + offset), eas.append(ea)
            batch.append(torch.full((x.shape[0],), b, dtype=torch.long))
            if self.queries is not None:
                query.append(torch.as_tensor(self.queries[i]) + offset)
            offset += x.shape[0]
        dev = next(self.model.parameters()).device
        q = torch.stack(query).to(dev) if query else None
        return (torch.cat(xs).to(dev), torch.cat(eis, 1).to(dev), torch.cat(eas).to(dev), torch.cat(batch).to(dev),
                len(idx), q)

    def predict_batch(self, idx, train=True):
        self.model.train(train)
        return self.model(*self.batch(idx))

    @torch.no_grad()
    def predict(self, idx, mu: float, sd: float) -> np.ndarray:
        self.model.eval()
        out = torch.cat([self.model(*self.batch(idx[s:s + 512])) for s in range(0, len(idx), 512)])
        return _finish(out, self.kind, mu, sd)


def fit_and_test(task, y: np.ndarray, kind: str, split: dict, cfg: TrainConfig, rng: np.random.Generator) -> dict:
    """Train `task` (GETTask or GINTask), keep the best validation state, return the test metrics."""
    state = {}

    def evaluate(idx, mu, sd):
        return metric(task.predict(idx, mu, sd), y[idx], kind)

    t0 = time.time()
    best, history, (mu, sd) = finetune(task.model, task.predict_batch, evaluate, split["train"], split["val"],
                                       y, kind, cfg, rng)
    task.model.load_state_dict(best[2])
    state["val"], state["best_step"] = best[0], best[1]
    for name in ("test", "test_ood"):
        if name in split:
            state[name] = evaluate(split[name], mu, sd)
    state["seconds"] = time.time() - t0
    state["history"] = history
    return state
