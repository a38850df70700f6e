"""Pre-training (NTP, SMTP) and fine-tuning loops for GET, and the GINE baseline's loop.

Sequences come from pools of precomputed random serializations (`n_views` per graph, see
data.serialize_domain): each step draws one view per graph and a fresh cyclic node-index
offset (`reindex`), the augmentation the paper gets from random Eulerian paths, start nodes and
index offsets. SMTP as the official code: one mask ratio per sequence (uniform, or cosine as an
option), that share of the sequence's tokens (each token of a position's stack on its own) replaced
by [MASK] / a random token / left unchanged at rates `mtp` (official 0.8 / 0 / 0.2).
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

from .checkpoint import Checkpoints, no_checkpoints, rng_state, set_rng_state
from .model import GET, GINE, GETConfig, GETPredictor
from .serialize import GSUM_ID, MASK_ID, PAD_ID, shift_node_ids


@dataclass
class TrainConfig:
    steps: int = 500
    batch_size: int = 64
    lr: float = 1e-3
    warmup: int = 50
    weight_decay: float = 0.01
    eval_every: int = 100  # fine-tuning: validation interval (the best validation step is kept)
    eval_views: int = 4  # fine-tuning: predictions averaged over this many serializations
    regression_loss: str = "l1"  # fine-tuning of regression tasks: l1 (official loss_type for PCQM4Mv2) or mse
    checkpoint_every: int = 0  # steps between checkpoints of a resumable job (checkpoint.py); 0: none

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        check_keys(cls, d)
        return cls(**d)


def on_device(device: torch.device | str) -> torch.device:
    """The job's device (`methods.common.device.job_device`). On a GPU (paper scale) float32 matmuls run
    in TF32, as mixed-precision training would (several times faster on Ampere and later); the CPU runs
    of the tiny scale are unaffected."""
    device = torch.device(device)
    if device.type == "cuda":
        torch.set_float32_matmul_precision("high")
    return device


def get_lr(step: int, cfg: TrainConfig) -> float:
    """Linear warm-up, then cosine decay to 10% of the peak."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def make_optimizer(model: torch.nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    return torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)


def pad_batch(seqs: list[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded (B, T, K) token ids and the (B, T) pad mask."""
    T, K = max(len(s) for s in seqs), seqs[0].shape[1]
    tokens = torch.full((len(seqs), T, K), PAD_ID, dtype=torch.long)
    for i, s in enumerate(seqs):
        tokens[i, : len(s)] = torch.as_tensor(s, dtype=torch.long)
    return tokens, tokens[..., 0] == PAD_ID


class Views:
    """A pool of serializations: `tokens` (positions, K) and `bounds` (graphs, views, 2) into it.
    With `reindex`, every drawn sequence gets a random cyclic node-index offset."""

    def __init__(self, pool: dict, n_node_ids: int, reindex: bool):
        self.tokens = pool["tokens"].numpy()
        self.bounds = pool["bounds"].numpy()
        self.n_node_ids, self.reindex = n_node_ids, reindex

    def __len__(self) -> int:
        return len(self.bounds)

    def get(self, i: int, k: int, offset: int) -> np.ndarray:
        s, e = self.bounds[i, k % self.bounds.shape[1]]
        seq = self.tokens[s:e]
        return shift_node_ids(seq, offset, self.n_node_ids) if self.reindex and offset else seq

    def draw(self, idx, rng: np.random.Generator) -> list[np.ndarray]:
        """One random serialization of each graph in `idx`, with a random offset."""
        views = rng.integers(self.bounds.shape[1], size=len(idx))
        offsets = rng.integers(self.n_node_ids, size=len(idx))
        return [self.get(int(i), int(k), int(o)) for i, k, o in zip(idx, views, offsets)]

    def fixed(self, idx, k: int) -> list[np.ndarray]:
        """View k of each graph with a fixed offset (evaluation)."""
        return [self.get(int(i), k, (31 * int(i) + 17 * k) % self.n_node_ids) for i in idx]


# --- pre-training ------------------------------------------------------------------------------


def smtp_mask_ratio(n: int, schedule: str, generator: torch.Generator) -> torch.Tensor:
    """Mask ratio per sequence, r ~ U(0, 1): `uniform` 1 - r (the official PCQM4Mv2 setting,
    polynomial with power 1), `cosine` 0.5 + 0.5 cos(pi r) (MaskGIT's)."""
    r = torch.rand(n, generator=generator)
    if schedule == "uniform":
        return 1 - r
    if schedule == "cosine":
        return 0.5 + 0.5 * torch.cos(math.pi * r)
    raise ValueError(f"SMTP mask schedule {schedule!r}: expected 'uniform' or 'cosine' (graphgpt.smtp.schedule)")


def smtp_corrupt(
    tokens: torch.Tensor,
    pad: torch.Tensor,
    generator: torch.Generator,
    schedule: str = "uniform",
    mtp=(0.8, 0.0, 0.2),
    vocab_size: int | None = None,
    unit: str = "token",
    ratio: torch.Tensor | None = None,
):
    """SMTP corruption of a batch of stacked sequences (B, T, K), one mask ratio per sequence.

    `unit="token"` (official `_mask_stacked_input_ids_v2`, v0.5.0): ceil(ratio * L * K) of the L * K
    tokens of the L non-pad positions (the `<gsum>` read-out included, as the official eos) are
    chosen, each on its own; every chosen token becomes [MASK], a random token, or stays, with
    probabilities `mtp`. `unit="position"` (this project's earlier variant): ceil(ratio * L) whole
    positions of the L non-pad positions other than `<gsum>`, all K tokens of a position together.
    Returns the input, the targets (-100 where not chosen) and the (B, T, K) int codes of what
    happened to each token: 0 not chosen, 1 [MASK], 2 random, 3 unchanged. `ratio` (B,) replaces the
    drawn mask ratios (tests)."""
    B, T, K = tokens.shape
    if unit == "token":
        cells = (~pad)[..., None].expand(B, T, K)
    elif unit == "position":
        cells = (~pad & (tokens[..., 0] != GSUM_ID))[..., None].expand(B, T, K)
    else:
        raise ValueError(f"SMTP mask unit {unit!r}: expected 'token' or 'position' (graphgpt.smtp.unit)")
    if ratio is None:
        ratio = smtp_mask_ratio(B, schedule, generator)
    if unit == "token":
        n_mask = torch.clamp(torch.ceil(ratio * cells.sum((1, 2))), min=1).long()
        scores = torch.rand(B, T * K, generator=generator).masked_fill(~cells.reshape(B, -1), 2.0)
        rank = scores.argsort(1).argsort(1).reshape(B, T, K)  # rank of each token among the maskable ones
    else:
        n_mask = torch.clamp(torch.ceil(ratio * cells[..., 0].sum(1)), min=1).long()
        scores = torch.rand(B, T, generator=generator).masked_fill(~cells[..., 0], 2.0)
        rank = scores.argsort(1).argsort(1)[..., None].expand(B, T, K)
    masked = (rank < n_mask[:, None, None]) & cells
    u = torch.rand(B, T, K, generator=generator)
    if unit == "position":
        u = u[..., :1].expand(B, T, K)  # one decision per position
    p_mask, p_random = mtp[0], mtp[1]
    action = torch.where(u < p_mask, 1, torch.where(u < p_mask + p_random, 2, 3)) * masked
    inputs = tokens.masked_fill(action == 1, MASK_ID)
    if p_random > 0:
        rand = torch.randint(GSUM_ID + 1, vocab_size, (B, T, K), generator=generator)
        inputs = torch.where(action == 2, rand, inputs)
    targets = tokens.masked_fill(~masked, -100)
    return inputs, targets, action


def pretrain_loss(
    model: GET,
    tokens: torch.Tensor,
    pad: torch.Tensor,
    objective: str,
    generator: torch.Generator,
    smtp: dict | None = None,
) -> torch.Tensor:
    """NTP: cross-entropy of every token of the next position (decoder). SMTP: of the masked
    positions (encoder). Averaged over the predicted tokens."""
    dev = next(model.parameters()).device
    if objective == "ntp":
        tokens, pad = tokens.to(dev), pad.to(dev)
        logits = model.lm_logits(model(tokens, pad)[:, :-1])
        targets = tokens[:, 1:].masked_fill(pad[:, 1:, None], -100)
    elif objective == "smtp":
        smtp = smtp or {}
        inputs, targets, _ = smtp_corrupt(
            tokens,
            pad,
            generator,
            smtp.get("schedule", "uniform"),
            tuple(smtp.get("mtp", (0.8, 0.0, 0.2))),
            model.cfg.vocab_size,
            smtp.get("unit", "token"),
        )
        logits = model.lm_logits(model(inputs.to(dev), pad.to(dev)))
        targets = targets.to(dev)
    else:
        raise ValueError(f"pre-training objective {objective!r}: expected 'ntp' or 'smtp'")
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)


def pretrain(
    views: Views,
    vocab_size: int,
    n_channels: int,
    objective: str,
    model_cfg: dict,
    cfg: TrainConfig,
    seed: int,
    smtp: dict | None = None,
    device: torch.device | str = "cpu",
    checkpoints: Checkpoints | None = None,
    name: str = "pretrain",
):
    """Pre-train GET on a pool of serializations; returns the model and the loss history. With
    `checkpoints`, the state is saved every `cfg.checkpoint_every` steps as run `name`, and a saved state
    of that run is resumed: the result equals an uninterrupted run's."""
    checkpoints = checkpoints or no_checkpoints()
    rng, gen = np.random.default_rng(seed), torch.Generator().manual_seed(seed)
    model = GET(GETConfig(vocab_size=vocab_size, n_channels=n_channels, causal=(objective == "ntp"), **model_cfg)).to(
        device
    )
    opt = make_optimizer(model, cfg)
    history, start, seconds = [], 0, 0.0
    saved = checkpoints.current(name)
    if saved is not None:
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["optimizer"])
        history, start, seconds = list(saved["history"]), saved["step"], saved["seconds"]
        set_rng_state(saved["rng"], {"batches": rng}, {"mask": gen})
    t0 = time.time()
    for step in tqdm(range(start, cfg.steps), desc=f"pretrain {objective}", mininterval=10):
        for group in opt.param_groups:
            group["lr"] = get_lr(step, cfg)
        idx = rng.integers(len(views), size=cfg.batch_size)
        tokens, pad = pad_batch(views.draw(idx, rng))
        loss = pretrain_loss(model, tokens, pad, objective, gen, smtp)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        history.append(loss.item())
        if checkpoints.due(step + 1, cfg.checkpoint_every) and step + 1 < cfg.steps:
            checkpoints.save_current(
                name,
                {
                    "model": model.state_dict(),
                    "optimizer": opt.state_dict(),
                    "step": step + 1,
                    "history": history,
                    "seconds": seconds + time.time() - t0,
                    "rng": rng_state({"batches": rng}, {"mask": gen}),
                },
            )
    return model, {"loss": history, "seconds": seconds + time.time() - t0}


# --- fine-tuning -------------------------------------------------------------------------------


def task_loss(out: torch.Tensor, y: torch.Tensor, kind: str, regression_loss: str = "l1") -> torch.Tensor:
    """Regression: L1 (the official PCQM4Mv2 fine-tuning, loss_type l1) or MSE on the standardised target;
    classification: cross-entropy."""
    if kind != "regression":
        return F.cross_entropy(out, y.long())
    if regression_loss == "l1":
        return F.l1_loss(out.squeeze(-1), y)
    if regression_loss == "mse":
        return F.mse_loss(out.squeeze(-1), y)
    raise ValueError(f"regression loss {regression_loss!r}: expected 'l1' or 'mse' (graphgpt.finetune.regression_loss)")


def roc_auc(score: np.ndarray, y: np.ndarray) -> float:
    """Area under the ROC curve of `score` for the binary labels `y` (0/1): the probability that a random
    positive scores above a random negative, ties counting one half (Mann-Whitney U with mid-ranks)."""
    from scipy.stats import rankdata

    y = np.asarray(y).astype(bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        raise ValueError(f"ROC-AUC needs both classes; the labels hold {n_pos} positives and {n_neg} negatives")
    ranks = rankdata(score)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def metric(pred: np.ndarray, y: np.ndarray, kind: str) -> float:
    """MAE for regression (in the label's units), accuracy for classification, ROC-AUC for binary (`pred`:
    the score of class 1)."""
    if kind == "regression":
        return float(np.mean(np.abs(pred - y)))
    if kind == "binary":
        return roc_auc(pred, y)
    return float(np.mean(pred == y))


def finetune(
    model: torch.nn.Module,
    predict_batch,
    evaluate,
    idx_train,
    idx_val,
    y: np.ndarray,
    kind: str,
    cfg: TrainConfig,
    rng: np.random.Generator,
    checkpoints: Checkpoints | None = None,
    name: str = "finetune",
    task_rngs: dict | None = None,
):
    """Generic loop: `predict_batch(idx, train=True)` -> outputs; `evaluate(idx, mu, sd)` -> metric.

    Regression targets are standardised with the training split's mean and std. The state with
    the best validation metric is kept (lower MAE / higher accuracy or ROC-AUC). With `checkpoints`, the run `name`
    is saved every `cfg.checkpoint_every` steps (`task_rngs`: the numpy generators the task itself draws
    from) and resumed from its saved state.
    """
    checkpoints = checkpoints or no_checkpoints()
    numpy_rngs = {"batches": rng, **(task_rngs or {})}
    model_params = list(model.parameters())
    opt = torch.optim.AdamW(model_params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    mu, sd = (float(y[idx_train].mean()), float(y[idx_train].std() + 1e-8)) if kind == "regression" else (0.0, 1.0)
    yt = torch.as_tensor((y - mu) / sd, dtype=torch.float32)
    better = (lambda a, b: a < b) if kind == "regression" else (lambda a, b: a > b)
    best, history, start = None, {"loss": [], "val": []}, 0
    saved = checkpoints.current(name)
    if saved is not None:
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["optimizer"])
        history, start, best = saved["history"], saved["step"], saved["best"]
        best = tuple(best) if best is not None else None
        set_rng_state(saved["rng"], numpy_rngs)
    for step in tqdm(range(start, cfg.steps), desc="finetune", mininterval=10):
        for group in opt.param_groups:
            group["lr"] = get_lr(step, cfg)
        idx = rng.choice(idx_train, size=cfg.batch_size)
        out = predict_batch(idx, train=True)
        loss = task_loss(out, yt[idx].to(out.device), kind, cfg.regression_loss)
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
        if checkpoints.due(step + 1, cfg.checkpoint_every) and step + 1 < cfg.steps:
            checkpoints.save_current(
                name,
                {
                    "model": model.state_dict(),
                    "optimizer": opt.state_dict(),
                    "step": step + 1,
                    "history": history,
                    "best": best,
                    "rng": rng_state(numpy_rngs),
                },
            )
    return best, history, (mu, sd)


class GETTask:
    """Fine-tuning GET on one task's pool of serializations (`Views`)."""

    def __init__(
        self,
        backbone: GET,
        views: Views,
        kind: str,
        n_out: int,
        cfg: TrainConfig,
        seed: int,
        device: torch.device | str = "cpu",
    ):
        self.model = GETPredictor(backbone, n_out).to(device)
        self.views, self.kind, self.cfg = views, kind, cfg
        self.rng = np.random.default_rng(seed)
        self.rngs = {"views": self.rng}  # what checkpoints save beside the loop's own generator

    def outputs(self, seqs) -> torch.Tensor:
        tokens, pad = pad_batch(seqs)
        dev = next(self.model.parameters()).device
        return self.model(tokens.to(dev), pad.to(dev))

    def predict_batch(self, idx, train=True):
        self.model.train(train)
        return self.outputs(self.views.draw(idx, self.rng))

    @torch.no_grad()
    def predict(self, idx, mu: float, sd: float) -> np.ndarray:
        """Predictions averaged over `eval_views` serializations (fixed views and offsets)."""
        self.model.eval()
        outs = []
        for k in range(self.cfg.eval_views):
            chunk = [self.outputs(self.views.fixed(idx[s : s + 256], k)) for s in range(0, len(idx), 256)]
            outs.append(torch.cat(chunk))
        return _finish(torch.stack(outs).mean(0), self.kind, mu, sd)


def _finish(out: torch.Tensor, kind: str, mu: float, sd: float) -> np.ndarray:
    out = out.detach().cpu()
    if kind == "regression":
        return out.squeeze(-1).numpy() * sd + mu
    if kind == "binary":  # the score of class 1, for ROC-AUC
        return torch.softmax(out.float(), -1)[:, 1].numpy()
    return out.argmax(-1).numpy()


class GINTask:
    """Fine-tuning (training) the GINE baseline on one task's graphs."""

    def __init__(
        self,
        graphs,
        queries,
        kind: str,
        n_out: int,
        n_tokens: int,
        gin_cfg: dict,
        seed: int,
        device: torch.device | str = "cpu",
    ):
        self.model = GINE(n_tokens, n_out, **gin_cfg).to(device)
        self.graphs, self.queries, self.kind = graphs, queries, kind
        self.rngs = {}

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
        return (
            torch.cat(xs).to(dev),
            torch.cat(eis, 1).to(dev),
            torch.cat(eas).to(dev),
            torch.cat(batch).to(dev),
            len(idx),
            q,
        )

    def predict_batch(self, idx, train=True):
        self.model.train(train)
        return self.model(*self.batch(idx))

    @torch.no_grad()
    def predict(self, idx, mu: float, sd: float) -> np.ndarray:
        self.model.eval()
        out = torch.cat([self.model(*self.batch(idx[s : s + 512])) for s in range(0, len(idx), 512)])
        return _finish(out, self.kind, mu, sd)


def fit_and_test(
    task,
    y: np.ndarray,
    kind: str,
    split: dict,
    cfg: TrainConfig,
    rng: np.random.Generator,
    checkpoints: Checkpoints | None = None,
    name: str = "finetune",
) -> dict:
    """Train `task` (GETTask or GINTask), keep the best validation state, return the test metrics
    (`checkpoints`, `name`: see `finetune`)."""
    state = {}

    def evaluate(idx, mu, sd):
        return metric(task.predict(idx, mu, sd), y[idx], kind)

    t0 = time.time()
    best, history, (mu, sd) = finetune(
        task.model,
        task.predict_batch,
        evaluate,
        split["train"],
        split["val"],
        y,
        kind,
        cfg,
        rng,
        checkpoints,
        name,
        task.rngs,
    )
    task.model.load_state_dict(best[2])
    state["val"], state["best_step"] = best[0], best[1]
    for name in ("test", "test_ood"):
        if name in split:
            state[name] = evaluate(split[name], mu, sd)
    state["seconds"] = time.time() - t0
    state["history"] = history
    return state
