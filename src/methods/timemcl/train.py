"""Training loops for TimeMCL (WTA / relaxed / annealed, paper Sec. 3.2) and the DeepAR-style baseline.

Plain functions: `get_batch`, `temperature_at`, `timemcl_loss`, one loop per model family
(`train_timemcl` trains either TimeMCL class through its `training_forward`). Adam with
gradient clipping, batches drawn with replacement from a seeded torch.Generator, so a
(data, config, seed) triple gives the same model on the same machine, device and thread count.
The device is the caller's (the DAG step passes the job's, `methods.common.device.job_device`);
models come back on the CPU. `train_model` is the DAG step: one model for each seed of a seed group,
saved together in one group checkpoint (`load_group` reads it back).
"""

from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass

import torch
from tqdm import tqdm

from methods.common.config import check_keys
from methods.common.io import load_torch, log, save_torch, set_seed, write_json

from .data import load_windows
from .losses import WTA_KINDS, annealing_temperature, hypothesis_errors, mcl_loss, score_loss
from .model import DeepARGaussian, ModelConfig, TimeMCL, TimeMCLOneShot

# checkpoint kind -> model class; "timemcl" is the autoregressive real-data model, "timemcl_oneshot"
# the one-shot toy model; both train with `train_timemcl`
MODEL_CLASSES = {"timemcl": TimeMCL, "timemcl_oneshot": TimeMCLOneShot, "deepar": DeepARGaussian}
TIMEMCL_KINDS = ("timemcl", "timemcl_oneshot")


@dataclass
class TrainConfig:
    steps: int = 300  # optimiser steps
    batch_size: int = 64  # windows per step, drawn with replacement
    lr: float = 1e-3  # Adam learning rate (authors: 1e-3)
    loss: str = "wta"  # "wta" | "relaxed" | "annealed"
    eps: float = 0.05  # relaxed WTA: total weight of the non-winners (authors: 0.05)
    t0: float = 10.0  # annealed WTA: initial temperature (authors: 10)
    t_end: float = 5e-4  # annealed WTA: temperature where annealing stops and pure WTA starts (authors: 5e-4)
    anneal_fraction: float = 0.97  # share of the steps spent annealing before pure WTA (authors: epoch 194 of 200)
    score_weight: float = 0.5  # weight of the score (BCE) loss (authors: score_loss_weight 0.5)
    grad_clip: float = 10.0  # max global gradient norm (authors: gradient_clip_val 10)
    weight_decay: float = 1e-8  # Adam's L2 weight decay (authors: 1e-8)
    annealed_mean_over_k: bool = True  # annealed loss averaged over K, as the authors' (False: summed)
    seed: int = 0  # model init and batch order

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        """Build from a plain dict; unknown keys and unknown loss kinds are errors."""
        check_keys(cls, d)
        cfg = cls(**d)
        if cfg.loss not in WTA_KINDS:
            raise ValueError(f"TrainConfig.loss={cfg.loss!r} unknown; allowed values: {', '.join(WTA_KINDS)}")
        assert cfg.steps >= 1 and cfg.batch_size >= 1, "steps and batch_size must be >= 1"
        assert 0.0 <= cfg.anneal_fraction <= 1.0, f"anneal_fraction must lie in [0, 1], got {cfg.anneal_fraction}"
        return cfg


def check_windows(contexts: torch.Tensor, targets: torch.Tensor, cfg: ModelConfig) -> None:
    """Contexts carry max(lags) steps of history in front of the C unrolled ones: (N, L + C, D)."""
    expected = ((cfg.history_length, cfg.dim), (cfg.horizon, cfg.dim))
    got = (tuple(contexts.shape[1:]), tuple(targets.shape[1:]))
    assert got == expected and len(contexts) == len(targets) > 0, (
        f"windows (N, context_length + max(lags), D) / (N, H, D) should match ModelConfig {expected}, "
        f"got {got} with N={len(contexts)}, {len(targets)}"
    )


def get_batch(
    contexts: torch.Tensor, targets: torch.Tensor, batch_size: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """A random batch (with replacement): (B, L + C, D), (B, H, D)."""
    idx = torch.randint(len(contexts), (batch_size,), generator=generator)
    return contexts[idx], targets[idx]


def temperature_at(step: int, cfg: TrainConfig) -> float:
    """Annealing temperature at `step` (0 = pure WTA); only the "annealed" loss anneals."""
    if cfg.loss != "annealed":
        return 0.0
    return annealing_temperature(step, round(cfg.anneal_fraction * cfg.steps), cfg.t0, cfg.t_end)


def timemcl_loss(
    model: TimeMCL | TimeMCLOneShot, context: torch.Tensor, target: torch.Tensor, cfg: TrainConfig, temperature: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Compound loss of paper Sec. 3.2: WTA-type loss + score_weight * score BCE, in scaled units.

    TimeMCL: errors over the teacher-forced C + H steps (T = C + H); TimeMCLOneShot: over the horizon.
    -> (total, mcl part, score part), scalars.
    """
    hyps, logits, tgt = model.training_forward(context, target)  # (B, K, T, D), (B, K), (B, T, D)
    err = hypothesis_errors(hyps, tgt)  # (B, K)
    l_mcl = mcl_loss(err, cfg.loss, cfg.eps, temperature, cfg.annealed_mean_over_k)
    l_score = score_loss(logits, err)
    return l_mcl + cfg.score_weight * l_score, l_mcl, l_score


def _optimise_step(model: torch.nn.Module, opt: torch.optim.Optimizer, loss: torch.Tensor, grad_clip: float) -> None:
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if grad_clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    opt.step()


def _setup(kind: str, model_cls, contexts, targets, model_cfg: ModelConfig, train_cfg: TrainConfig, device):
    check_windows(contexts, targets, model_cfg)
    log(f"[{kind}] {len(contexts)} training windows on {device}; {model_cfg}; {train_cfg}")
    torch.manual_seed(train_cfg.seed)
    model = model_cls(model_cfg).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=train_cfg.lr, weight_decay=train_cfg.weight_decay)
    gen = torch.Generator().manual_seed(train_cfg.seed)
    return model, opt, gen


def train_timemcl(
    contexts: torch.Tensor,
    targets: torch.Tensor,
    model_cfg: ModelConfig,
    train_cfg: TrainConfig,
    show_progress: bool = True,
    kind: str = "timemcl",
    device: torch.device | None = None,
) -> tuple[TimeMCL | TimeMCLOneShot, dict]:
    """Train TimeMCL (kind "timemcl") or its one-shot toy form ("timemcl_oneshot") on windows
    (N, L + C, D) -> (N, H, D). Returns (model in eval mode, history)."""
    if kind not in TIMEMCL_KINDS:
        raise ValueError(f"train_timemcl: kind={kind!r} unknown; allowed values: {', '.join(TIMEMCL_KINDS)}")
    device = device or torch.device("cpu")
    model, opt, gen = _setup(kind, MODEL_CLASSES[kind], contexts, targets, model_cfg, train_cfg, device)
    hist = {"loss": [], "mcl_loss": [], "score_loss": [], "temperature": []}
    start = time.perf_counter()
    model.train()
    for step in tqdm(range(train_cfg.steps), disable=not show_progress, file=sys.stderr, desc=kind):
        ctx, tgt = (t.to(device) for t in get_batch(contexts, targets, train_cfg.batch_size, gen))
        temp = temperature_at(step, train_cfg)
        loss, l_mcl, l_score = timemcl_loss(model, ctx, tgt, train_cfg, temp)
        _optimise_step(model, opt, loss, train_cfg.grad_clip)
        for key, val in zip(hist, (loss.item(), l_mcl.item(), l_score.item(), temp)):
            hist[key].append(val)
    hist["train_seconds"] = time.perf_counter() - start
    log(f"[{kind}] {train_cfg.steps} steps in {hist['train_seconds']:.2f}s, final loss {hist['loss'][-1]:.4f}")
    return model.cpu().eval(), hist


def train_deepar(
    contexts: torch.Tensor,
    targets: torch.Tensor,
    model_cfg: ModelConfig,
    train_cfg: TrainConfig,
    show_progress: bool = True,
    device: torch.device | None = None,
) -> tuple[DeepARGaussian, dict]:
    """Train the DeepAR-style Gaussian baseline by teacher-forced NLL. Returns (model in eval mode, history)."""
    device = device or torch.device("cpu")
    model, opt, gen = _setup("deepar", DeepARGaussian, contexts, targets, model_cfg, train_cfg, device)
    hist = {"loss": []}
    start = time.perf_counter()
    model.train()
    for _ in tqdm(range(train_cfg.steps), disable=not show_progress, file=sys.stderr, desc="deepar"):
        ctx, tgt = (t.to(device) for t in get_batch(contexts, targets, train_cfg.batch_size, gen))
        loss = model.nll(ctx, tgt)
        _optimise_step(model, opt, loss, train_cfg.grad_clip)
        hist["loss"].append(loss.item())
    hist["train_seconds"] = time.perf_counter() - start
    log(f"[deepar] {train_cfg.steps} steps in {hist['train_seconds']:.2f}s, final NLL {hist['loss'][-1]:.4f}")
    return model.cpu().eval(), hist


def make_checkpoint(
    kind: str, model: torch.nn.Module, model_cfg: ModelConfig, train_cfg: TrainConfig, history: dict
) -> dict:
    """Everything needed to rebuild the model and know where it came from (for common.io.save_torch)."""
    if kind not in MODEL_CLASSES or type(model) is not MODEL_CLASSES[kind]:
        raise ValueError(
            f"make_checkpoint: kind={kind!r} does not name the class of {type(model).__name__}; "
            f"kinds: {', '.join(f'{k} ({c.__name__})' for k, c in MODEL_CLASSES.items())}"
        )
    return {
        "kind": kind,
        "model_state": model.state_dict(),
        "model_config": dataclasses.asdict(model_cfg),
        "train_config": dataclasses.asdict(train_cfg),
        "steps": train_cfg.steps,
        "final_loss": history["loss"][-1],
        "train_seconds": history["train_seconds"],
    }


def load_checkpoint(ckpt: dict) -> tuple[str, torch.nn.Module]:
    """Rebuild (kind, model in eval mode) from a `make_checkpoint` dict (as read back by torch.load)."""
    kind = ckpt["kind"]
    if kind not in MODEL_CLASSES:
        raise ValueError(f"checkpoint kind={kind!r} unknown; allowed values: {', '.join(MODEL_CLASSES)}")
    model = MODEL_CLASSES[kind](ModelConfig.from_dict(ckpt["model_config"]))
    model.load_state_dict(ckpt["model_state"])
    return kind, model.eval()


# --- the DAG step: one model per seed of a seed group -------------------------------------------


def train_one(
    contexts: torch.Tensor,
    targets: torch.Tensor,
    spec: dict,
    method: str,
    K: int,
    seed: int,
    model_params: dict,
    train_params: dict,
    device: torch.device | None = None,
) -> tuple[dict, dict]:
    """Train TimeMCL (method = its WTA variant) or the DeepAR-style baseline (method = 'deepar') on one
    seed; returns (checkpoint dict, history)."""
    set_seed(seed)
    model_cfg = ModelConfig(
        dim=contexts.shape[2],
        context_length=spec["context_length"],
        horizon=spec["horizon"],
        n_hypotheses=K,
        lags=tuple(spec.get("lags", [1])),
        **model_params,
    )
    train_cfg = TrainConfig.from_dict({**train_params, "loss": "wta" if method == "deepar" else method, "seed": seed})
    trainer, kind = (train_deepar, "deepar") if method == "deepar" else (train_timemcl, "timemcl")
    model, history = trainer(contexts, targets, model_cfg, train_cfg, device=device)
    return make_checkpoint(kind, model, model_cfg, train_cfg, history), {"method": method, "seed": seed, **history}


def train_model(
    series_csv: str,
    spec: dict,
    method: str,
    K: int,
    seeds: list[int],
    model_params: dict,
    train_params: dict,
    ckpt_path: str,
    history_path: str,
    threads: int = 1,
    device: torch.device | None = None,
) -> None:
    """Steps timemcl_train / timemcl_train_deepar: one model per seed of the group (`{seeds}` wildcard),
    saved as one group checkpoint {"seeds", "checkpoints"} and one history file {"method", "seeds",
    "histories"}; every seed starts from its own set_seed, so a seed's model does not depend on its group."""
    torch.set_num_threads(threads)
    ctx, tgt = load_windows(series_csv, spec)["train"]
    ckpts, histories = [], []
    for seed in seeds:
        ckpt, history = train_one(ctx, tgt, spec, method, K, int(seed), model_params, train_params, device)
        ckpts.append(ckpt)
        histories.append(history)
    save_torch(ckpt_path, {"seeds": [int(s) for s in seeds], "checkpoints": ckpts})
    write_json(history_path, {"method": method, "seeds": [int(s) for s in seeds], "histories": histories})


def load_group(path: str) -> dict[int, tuple[str, torch.nn.Module]]:
    """{seed: (kind, model in eval mode)} of a group checkpoint written by `train_model`."""
    group = load_torch(path)
    return {int(seed): load_checkpoint(ckpt) for seed, ckpt in zip(group["seeds"], group["checkpoints"])}
