"""Training loops: Point-MAE pre-training (masked reconstruction, Chamfer-L2) and supervised adaptation
of the frozen backbone with one method, as the official runners run them (AdamW without weight decay on
biases, 1-D parameters and tokens; timm's per-epoch cosine schedule with warm-up; gradient clipping;
per-cloud point shuffling and the runner's augmentation)."""

from __future__ import annotations

import math
import time

import numpy as np
import torch

from .model import AdaptedClassifier, MaskedAutoencoder, count_parameters

AUGMENTATIONS = ("rotate", "scale_translate", "none")


def cosine_lr(step: int, total: int, warmup: int, base: float, floor: float = 1e-6) -> float:
    """Per-step linear warm-up then cosine decay to `floor` (used for the short Point-MAE pre-training)."""
    if step < warmup:
        return base * (step + 1) / warmup
    t = (step - warmup) / max(1, total - warmup)
    return floor + 0.5 * (base - floor) * (1 + math.cos(math.pi * t))


def timm_cosine_lr(
    t: int, t_initial: int, warmup_t: int, base: float, lr_min: float = 1e-6, warmup_lr_init: float = 1e-6
) -> float:
    """timm 0.4.5 CosineLRScheduler._get_lr at epoch t with the official builder's arguments (t_mul 1,
    decay_rate 0.1, cycle_limit 1, no warm-up prefix: the cosine runs over t itself, not t - warmup_t)."""
    if t < warmup_t:
        return warmup_lr_init + t * (base - warmup_lr_init) / warmup_t
    i = t // t_initial
    if i >= 1:
        return lr_min
    return lr_min + 0.5 * (base - lr_min) * (1 + math.cos(math.pi * (t - t_initial * i) / t_initial))


def official_epoch_lr(epoch: int, epochs: int, warmup: int, base: float) -> float:
    """The learning rate of epoch `epoch` in the official runner: the scheduler is stepped with the epoch
    index at the end of each epoch, so epoch 0 runs at the initial value (warmup_lr_init with a warm-up, else
    the base lr) and epoch e >= 1 at the schedule's value for e - 1; the loop runs epochs 0 .. `epochs`."""
    if epoch == 0:
        return 1e-6 if warmup > 0 else base
    return timm_cosine_lr(epoch - 1, epochs, warmup, base)


def param_groups(named: dict[str, torch.nn.Parameter], weight_decay: float) -> list[dict]:
    """The official builder's AdamW groups: no weight decay for 1-D parameters, biases and names containing
    'token'; weight_decay for the rest."""
    no_decay = [p for n, p in named.items() if p.dim() == 1 or n.endswith(".bias") or "token" in n]
    decay = [p for n, p in named.items() if not (p.dim() == 1 or n.endswith(".bias") or "token" in n)]
    return [{"params": no_decay, "weight_decay": 0.0}, {"params": decay, "weight_decay": weight_decay}]


def _batches(n: int, batch: int, rng: np.random.Generator):
    order = rng.permutation(n)
    for i in range(0, n - batch + 1, batch):  # drop_last, as the official loaders
        yield order[i : i + batch]


def axis_rotation(axis: int, theta: float) -> np.ndarray:
    """expm of the cross-product matrix of theta e_axis (the official PointcloudRotate.M): a right-handed
    rotation by theta about coordinate axis `axis`."""
    c, s = math.cos(theta), math.sin(theta)
    a, b = [(1, 2), (2, 0), (0, 1)][axis]
    R = np.eye(3)
    R[a, a], R[a, b], R[b, a], R[b, b] = c, -s, s, c
    return R


def rotate_batch(pts: np.ndarray, rng: np.random.Generator, axis: int = 2) -> np.ndarray:
    """The official ScanObjectNN train augmentation (PointcloudRotate(angle=[0, 1, 0]) applied to the batch
    tensor): one rotation by U(-pi, pi) about the up axis for the whole batch (y for ScanObjectNN; z for the
    procedural shapes, which stand upright on z)."""
    R = axis_rotation(axis, rng.uniform(-np.pi, np.pi)).astype(np.float32)
    return pts @ R.T


def scale_translate_batch(pts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """PointcloudScaleAndTranslate (official full fine-tuning and Point-MAE pre-training): per cloud an
    anisotropic scale U(2/3, 3/2)^3, then a translation U(-0.2, 0.2)^3."""
    scale = rng.uniform(2.0 / 3.0, 1.5, (len(pts), 1, 3))
    shift = rng.uniform(-0.2, 0.2, (len(pts), 1, 3))
    return (pts * scale + shift).astype(np.float32)


def shuffle_points(pts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The official train loader's random point order per cloud (so farthest-point sampling, which starts
    at point 0, starts at a random point): ScanObjectNN's __getitem__ shuffles, and FPS to all points
    followed by a random choice of all of them is a second permutation."""
    order = np.argsort(rng.random(pts.shape[:2]), axis=1)
    return np.take_along_axis(pts, order[..., None], axis=1)


def augment(pts: np.ndarray, kind: str, rng: np.random.Generator, up_axis: int) -> np.ndarray:
    if kind == "rotate":
        return rotate_batch(pts, rng, up_axis)
    if kind == "scale_translate":
        return scale_translate_batch(pts, rng)
    if kind == "none":
        return pts
    raise ValueError(f"unknown augmentation {kind!r} (gaprompt.adapt.augment / augment_full); one of {AUGMENTATIONS}")


def pretrain(
    mae: MaskedAutoencoder, clouds: np.ndarray, cfg: dict, seed: int, log, device: torch.device | str = "cpu"
) -> list[float]:
    """Point-MAE pre-training for cfg['steps'] AdamW steps (official builder's weight-decay groups; Point-MAE's
    scale-and-translate augmentation) on `device` (the model is moved there); returns the loss per step."""
    torch.manual_seed(seed)
    mae.to(device)
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(param_groups(dict(mae.named_parameters()), cfg["weight_decay"]), lr=cfg["lr"])
    losses, step, t0 = [], 0, time.time()
    mae.train()
    while step < cfg["steps"]:
        for idx in _batches(len(clouds), cfg["batch"], rng):
            if step >= cfg["steps"]:
                break
            for g in opt.param_groups:
                g["lr"] = cosine_lr(step, cfg["steps"], cfg["warmup_steps"], cfg["lr"])
            pts = torch.from_numpy(scale_translate_batch(clouds[idx], rng)).to(device)
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
    """Accuracy in eval mode, in batches of `batch` clouds in the given order (the official validation loader
    uses twice the training batch; with the official propagation indexing a cloud's logits depend on its batch),
    on the device the model is on."""
    model.eval()
    device = next(model.parameters()).device
    correct = 0
    for i in range(0, len(clouds), batch):
        logits = model(torch.from_numpy(clouds[i : i + batch]).to(device))
        correct += (logits.argmax(-1).cpu().numpy() == labels[i : i + batch]).sum()
    return float(correct / len(clouds))


def adapt(
    model: AdaptedClassifier, train: tuple, test: tuple, cfg: dict, seed: int, log, device: torch.device | str = "cpu"
) -> dict:
    """Train what `model.method` trains for epochs 0 .. cfg['epochs'] (the official loop runs max_epoch + 1
    epochs) on `device` (the model is moved there; batches are drawn and augmented on the CPU, so the data
    order is the same on every device); report the final-epoch held-out accuracy (no selection on the test
    split) and the training curve."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model.to(device)
    model.freeze()
    named = {n: p for n, p in model.named_parameters() if p.requires_grad}
    params = list(named.values())
    opt = torch.optim.AdamW(param_groups(named, cfg["weight_decay"]), lr=cfg["lr"])
    kind = cfg["augment_full"] if model.method == "full" else cfg["augment"]
    x_tr, y_tr = train
    curve, t0 = [], time.time()
    for epoch in range(cfg["epochs"] + 1):
        for g in opt.param_groups:
            g["lr"] = official_epoch_lr(epoch, cfg["epochs"], cfg["warmup_epochs"], cfg["lr"])
        model.train()  # the official runner trains in train mode: frozen BN statistics still update
        losses = []
        for idx in _batches(len(x_tr), cfg["batch"], rng):
            pts = shuffle_points(x_tr[idx], rng) if cfg["shuffle_points"] else x_tr[idx]
            pts = torch.from_numpy(augment(pts, kind, rng, cfg["up_axis"])).to(device)
            loss = torch.nn.functional.cross_entropy(model(pts), torch.from_numpy(y_tr[idx]).to(device))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, cfg["clip_norm"])
            opt.step()
            losses.append(loss.item())
        curve.append(float(np.mean(losses)))
        log(f"{model.method} seed {seed} epoch {epoch}: loss {curve[-1]:.4f} ({time.time() - t0:.0f} s)")
    eval_batch = 2 * cfg["batch"]
    return {
        "test_acc": accuracy(model, *test, batch=eval_batch),
        "train_acc": accuracy(model, *train, batch=eval_batch),
        "loss_curve": curve,
        "seconds": time.time() - t0,
        **count_parameters(model),
    }
