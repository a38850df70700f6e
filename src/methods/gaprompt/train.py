"""Training loops: Point-MAE pre-training (masked reconstruction, Chamfer-L2) and supervised adaptation
of the frozen backbone with one method (AdamW, cosine schedule with warm-up, gradient clipping)."""
from __future__ import annotations

import math
import time

import numpy as np
import torch

from .model import AdaptedClassifier, MaskedAutoencoder, count_parameters
from .shapes import up_rotation


def cosine_lr(step: int, total: int, warmup: int, base: float, floor: float = 1e-6) -> float:
    """Linear warm-up then cosine decay to `floor` (the official CosineLRScheduler with warm-up)."""
    if step < warmup:
        return base * (step + 1) / warmup
    t = (step - warmup) / max(1, total - warmup)
    return floor + 0.5 * (base - floor) * (1 + math.cos(math.pi * t))


def _batches(n: int, batch: int, rng: np.random.Generator):
    order = rng.permutation(n)
    for i in range(0, n - batch + 1, batch):  # drop_last, as the official loaders
        yield order[i:i + batch]


def rotate_batch(pts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """ScanObjectNN train augmentation of the official code: a random rotation about the up axis."""
    R = np.stack([up_rotation(a) for a in rng.uniform(0, 2 * np.pi, len(pts))]).astype(np.float32)
    return np.einsum("bij,bnj->bni", R, pts)


def pretrain(mae: MaskedAutoencoder, clouds: np.ndarray, cfg: dict, seed: int, log) -> list[float]:
    """Point-MAE pre-training for cfg['steps'] AdamW steps; returns the loss per step."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(mae.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"])
    losses, step, t0 = [], 0, time.time()
    mae.train()
    while step < cfg["steps"]:
        for idx in _batches(len(clouds), cfg["batch"], rng):
            if step >= cfg["steps"]:
                break
            for g in opt.param_groups:
                g["lr"] = cosine_lr(step, cfg["steps"], cfg["warmup_steps"], cfg["lr"])
            pts = torch.from_numpy(rotate_batch(clouds[idx], rng))
            loss = mae(pts, gen)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if step % 25 == 0:
                log(f"pretrain step {step}: chamfer-L2 {loss.item():.5f} ({time.time() - t0:.0f} s)")
            step += 1
    return losses


@torch.no_grad()
def accuracy(model: AdaptedClassifier, clouds: np.ndarray, labels: np.ndarray, batch: int = 64) -> float:
    model.eval()
    correct = 0
    for i in range(0, len(clouds), batch):
        logits = model(torch.from_numpy(clouds[i:i + batch]))
        correct += (logits.argmax(-1).numpy() == labels[i:i + batch]).sum()
    return float(correct / len(clouds))


def adapt(model: AdaptedClassifier, train: tuple, test: tuple, cfg: dict, seed: int, log) -> dict:
    """Train what `model.method` trains for cfg['epochs'] epochs; report the final-epoch held-out accuracy
    (no selection on the test split) and the training curve."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model.freeze()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg["lr"], weight_decay=cfg["weight_decay"])
    x_tr, y_tr = train
    steps_per_epoch = len(x_tr) // cfg["batch"]
    total, warmup = cfg["epochs"] * steps_per_epoch, cfg["warmup_epochs"] * steps_per_epoch
    step, curve, t0 = 0, [], time.time()
    for epoch in range(cfg["epochs"]):
        model.train()  # the official runner trains in train mode: frozen BN statistics still update
        losses = []
        for idx in _batches(len(x_tr), cfg["batch"], rng):
            for g in opt.param_groups:
                g["lr"] = cosine_lr(step, total, warmup, cfg["lr"])
            pts = torch.from_numpy(rotate_batch(x_tr[idx], rng) if cfg["rotate"] else x_tr[idx])
            loss = torch.nn.functional.cross_entropy(model(pts), torch.from_numpy(y_tr[idx]))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, cfg["clip_norm"])
            opt.step()
            losses.append(loss.item())
            step += 1
        curve.append(float(np.mean(losses)))
        log(f"{model.method} seed {seed} epoch {epoch}: loss {curve[-1]:.4f} ({time.time() - t0:.0f} s)")
    return {"test_acc": accuracy(model, *test), "train_acc": accuracy(model, *train), "loss_curve": curve,
            "seconds": time.time() - t0, **count_parameters(model)}
