"""Optional PEFT of SLiM's adapters (Section 3.5): only L and R train, the compressed base stays frozen.

The paper fine-tunes the adapters with Adafactor on a small slice of the pre-training text. Here the
loss is a callable (next-token loss on calibration windows for the causal LM; for the sentence encoder
the cosine distance of its embeddings to the dense model's, see ladder.py).
"""

from __future__ import annotations

from typing import Callable

import torch
from torch import nn
from tqdm.auto import tqdm

from methods.common.io import log

from .layer import SlimLinear
from .quant import fake_quantize_adapter


def adapter_parameters(model: nn.Module) -> list[nn.Parameter]:
    """The L and R parameters of every SlimLinear of the model."""
    params = []
    for m in model.modules():
        if isinstance(m, SlimLinear) and m.lora_l is not None:
            params += [m.lora_l, m.lora_r]
    if not params:
        raise ValueError("PEFT: the model has no SlimLinear with adapters (recipe adapter must be naive or slim)")
    return params


def finetune_adapters(
    model: nn.Module,
    n_examples: int,
    loss_fn: Callable[[nn.Module, torch.Tensor], torch.Tensor],
    steps: int,
    lr: float,
    batch_size: int,
    seed: int,
) -> list[float]:
    """Adafactor on the adapters only; each step draws `batch_size` example indices in [0, n_examples)
    with `seed` and minimises loss_fn(model, indices)."""
    for p in model.parameters():
        p.requires_grad_(False)
    params = adapter_parameters(model)
    for p in params:
        p.requires_grad_(True)
    opt = torch.optim.Adafactor(params, lr=lr)
    gen = torch.Generator().manual_seed(seed)
    losses = []
    model.train()
    for step in tqdm(range(steps), desc="peft", mininterval=5):
        idx = torch.randint(0, n_examples, (batch_size,), generator=gen)
        loss = loss_fn(model, idx)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        if step % max(1, steps // 5) == 0:
            log(f"peft step {step}: loss {losses[-1]:.4f}")
    model.eval()
    for p in params:
        p.requires_grad_(False)
    return losses


@torch.no_grad()
def quantize_adapters(model: nn.Module, bits: int, group_size: int) -> None:
    """RTN of every adapter in place by column groups (SLiM-LoRA^Q, as the official `quantize_lora`), e.g. after PEFT."""
    for m in model.modules():
        if isinstance(m, SlimLinear) and m.lora_l is not None:
            m.lora_l.copy_(fake_quantize_adapter(m.lora_l, bits, group_size))
            m.lora_r.copy_(fake_quantize_adapter(m.lora_r, bits, group_size))
