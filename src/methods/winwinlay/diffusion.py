"""DDPM training of the denoiser and DDIM sampling with layout guidance (plain or adaptive update)."""

from __future__ import annotations

import numpy as np
import torch

from .canvas import render, sample_layouts
from .guidance import guided_ddim
from .model import Denoiser


def alpha_bars(n_steps: int, beta_start: float, beta_end: float) -> torch.Tensor:
    """Cumulative products of 1 - beta for a linear beta schedule (DDPM)."""
    return torch.cumprod(1.0 - torch.linspace(beta_start, beta_end, n_steps), 0)


def train_denoiser(
    digits: dict, cfg: dict, seed: int, log, device: torch.device | str = "cpu"
) -> tuple[Denoiser, list[float]]:
    """eps-prediction MSE on freshly rendered canvases every step (AdamW) on `device`; returns the model and loss
    curve. Canvases, timesteps and noise are drawn on the CPU (the same draws on every device), then moved."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = Denoiser(cfg["channels"], cfg["token_dim"]).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.0)
    abar = alpha_bars(cfg["n_timesteps"], cfg["beta_start"], cfg["beta_end"])
    losses = []
    for step in range(cfg["steps"]):
        classes, corners = sample_layouts(cfg["batch"], cfg["side"], cfg["n_objects"], rng)
        x0 = torch.from_numpy(render(digits["train_x"], digits["train_y"], classes, corners, cfg["side"], rng))[:, None]
        t = torch.randint(0, cfg["n_timesteps"], (cfg["batch"],))
        noise = torch.randn_like(x0)
        a = abar[t].view(-1, 1, 1, 1)
        x0, noise, a, t = x0.to(device), noise.to(device), a.to(device), t.to(device)
        eps, _ = model(a.sqrt() * x0 + (1 - a).sqrt() * noise, t, torch.from_numpy(classes).to(device))
        loss = ((eps - noise) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
        if step % max(cfg["steps"] // 10, 1) == 0:
            log(f"train step {step}: loss {np.mean(losses[-50:]):.4f}")
    return model.eval(), losses


class DigitBackbone:
    """The tiny denoiser seen through the interface of guidance.guided_ddim: text tokens are [background,
    class_1, ..., class_K] (the background token takes the part of SD's padding tokens), no classifier-free
    guidance, x_0 clipped to the canvas range, DDIM timesteps evenly spaced over the training steps."""

    clip_x0 = True
    final_alpha_cumprod = 1.0

    def __init__(self, model: Denoiser, classes: torch.Tensor, abar: torch.Tensor, side: int):
        self.model, self.classes, self.alphas_cumprod = model, classes, abar
        self.map_size = (side // 2, side // 2)
        self.obj_index = torch.arange(1, classes.shape[1] + 1).expand(len(classes), -1)

    def timesteps(self, n_steps: int) -> list[int]:
        return torch.linspace(len(self.alphas_cumprod) - 1, 0, n_steps).round().long().tolist()

    def guidance(self, z, t):
        return self.model(z, torch.full((len(z),), t, dtype=torch.long, device=z.device), self.classes)

    @torch.no_grad()
    def eps(self, z, t):
        return self.guidance(z, t)[0]


def guided_sample(
    model: Denoiser,
    classes: torch.Tensor,
    boxes: torch.Tensor,
    method: dict,
    cfg: dict,
    abar: torch.Tensor,
    gen: torch.Generator,
) -> tuple[torch.Tensor, dict]:
    """Guided DDIM of the digit-canvas denoiser from pure noise (guidance.guided_ddim) on the model's device (the
    noise is drawn on the CPU generator `gen`, the same on every device); canvases in [-1, 1]."""
    side = cfg["side"]
    device = next(model.parameters()).device
    classes = classes.to(device)
    z = torch.randn(len(classes), 1, side, side, generator=gen).to(device)
    x, info = guided_ddim(DigitBackbone(model, classes, abar, side), z, boxes, method, cfg, gen)
    return x.clamp(-1, 1), info
