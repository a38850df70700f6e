"""Training of the small LlamaForCausalLM (tiny scale; rule lm_train, step function `train`).

A nanoGPT-style loop: random windows of the train split (`get_batch`), AdamW, linear warm-up then
cosine decay (`get_lr`), a validation estimate every `eval_every` steps (`estimate_loss`), the
checkpoint written with save_pretrained (safetensors) together with the tokenizer and the provenance
(model arguments, resolved training config, history, best validation loss). The loss curve is drawn
from that history by the figure step (methods.common.lm.figures); the n-gram baselines the model must
beat are in methods.common.lm.baselines.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path

import torch
from tqdm import tqdm

from methods.common.config import check_keys
from methods.common.io import log, set_seed, write_json


@dataclasses.dataclass
class TrainConfig:
    steps: int = 800
    batch_size: int = 16
    seq_len: int = 128
    lr: float = 3e-3
    min_lr: float = 3e-4
    warmup: int = 50
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    eval_every: int = 100
    eval_windows: int = 32
    seed: int = 0

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        check_keys(cls, d)
        return cls(**d)


def get_batch(ids: torch.Tensor, batch_size: int, seq_len: int, g: torch.Generator) -> torch.Tensor:
    """`batch_size` random windows of `seq_len` tokens -> (B, T); the model shifts labels itself."""
    starts = torch.randint(0, ids.numel() - seq_len, (batch_size,), generator=g)
    return torch.stack([ids[s : s + seq_len] for s in starts.tolist()])


def get_lr(step: int, cfg: TrainConfig) -> float:
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.min_lr + 0.5 * (cfg.lr - cfg.min_lr) * (1 + math.cos(math.pi * progress))


@torch.no_grad()
def estimate_loss(model, ids: torch.Tensor, cfg: TrainConfig) -> float:
    """Mean next-token loss on the first `eval_windows` non-overlapping windows of `ids`."""
    n = min(cfg.eval_windows, ids.numel() // cfg.seq_len)
    x = ids[: n * cfg.seq_len].view(n, cfg.seq_len)
    model.eval()
    losses = [model(input_ids=x[i : i + 16], labels=x[i : i + 16]).loss.item() for i in range(0, n, 16)]
    model.train()
    return sum(losses) / len(losses)


def train_lm(splits: dict, tokenizer, model_args: dict, cfg: TrainConfig, out_dir: str | Path) -> dict:
    """Train a LlamaForCausalLM(llama_config(**model_args)) on splits["train"]; save it to `out_dir`."""
    from transformers import LlamaForCausalLM

    from methods.common.lm.model import llama_config

    set_seed(cfg.seed)
    args = dict(
        model_args, vocab_size=len(tokenizer), bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id
    )
    if cfg.seq_len > args["max_position_embeddings"]:
        raise ValueError(
            f"lm.train.seq_len {cfg.seq_len} > lm.model.max_position_embeddings {args['max_position_embeddings']}"
        )
    model = LlamaForCausalLM(llama_config(**args))
    n_params = sum(p.numel() for p in model.parameters())
    log(f"LlamaForCausalLM: {n_params / 1e6:.2f}M parameters, {splits['train'].numel()} training tokens")
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=cfg.lr,
        betas=(0.9, 0.95),
    )
    g = torch.Generator().manual_seed(cfg.seed)
    history = {"step": [], "train_loss": [], "eval_step": [], "val_loss": []}
    best_val, t0 = float("inf"), time.time()
    model.train()
    bar = tqdm(range(cfg.steps), desc="train lm", mininterval=10)
    for step in bar:
        for group in opt.param_groups:
            group["lr"] = get_lr(step, cfg)
        x = get_batch(splits["train"], cfg.batch_size, cfg.seq_len, g)
        loss = model(input_ids=x, labels=x).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        history["step"].append(step)
        history["train_loss"].append(loss.item())
        if (step + 1) % cfg.eval_every == 0 or step + 1 == cfg.steps:
            val = estimate_loss(model, splits["validation"], cfg)
            best_val = min(best_val, val)
            history["eval_step"].append(step + 1)
            history["val_loss"].append(val)
            bar.set_postfix(train=f"{loss.item():.3f}", val=f"{val:.3f}")
            log(f"step {step + 1}: train loss {loss.item():.3f}, validation loss {val:.3f}")
    out_dir = Path(out_dir)
    model.save_pretrained(str(out_dir), safe_serialization=True)
    tokenizer.save_pretrained(str(out_dir))
    info = {
        "model_args": args,
        "n_parameters": n_params,
        "train": dataclasses.asdict(cfg),
        "best_val_loss": best_val,
        "train_seconds": time.time() - t0,
        "history": history,
    }
    write_json(out_dir / "training.json", info)
    return info


def train(tokens, tokenizer_dir, model_args: dict, train_cfg: dict, out_dir, threads: int = 1) -> dict:
    """The lm_train step: train on the token splits with the BPE tokenizer, write the model directory."""
    from methods.common.lm.evaluate import torch_threads
    from methods.common.lm.model import load_token_splits
    from methods.common.lm.tokenizer import load_tokenizer

    cfg = TrainConfig.from_dict(train_cfg)
    with torch_threads(threads):
        info = train_lm(load_token_splits(tokens), load_tokenizer(tokenizer_dir), model_args, cfg, out_dir)
    log(f"trained in {info['train_seconds']:.0f} s, best validation loss {info['best_val_loss']:.3f}")
    return info
