"""DDPM training of the denoiser and DDIM sampling with layout guidance (plain or adaptive update)."""
from __future__ import annotations

import numpy as np
import torch

from .canvas import render, sample_layouts
from .energies import box_mask, box_prior, common_energy, nonlocal_energy, rho_at
from .model import Denoiser
from .update import adaptive_step, plain_step


def alpha_bars(n_steps: int, beta_start: float, beta_end: float) -> torch.Tensor:
    """Cumulative products of 1 - beta for a linear beta schedule (DDPM)."""
    return torch.cumprod(1.0 - torch.linspace(beta_start, beta_end, n_steps), 0)


def train_denoiser(digits: dict, cfg: dict, seed: int, log) -> tuple[Denoiser, list[float]]:
    """eps-prediction MSE on freshly rendered canvases every step (AdamW); returns the model and loss curve."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = Denoiser(cfg["channels"], cfg["token_dim"])
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.0)
    abar = alpha_bars(cfg["n_timesteps"], cfg["beta_start"], cfg["beta_end"])
    losses = []
    for step in range(cfg["steps"]):
        classes, corners = sample_layouts(cfg["batch"], cfg["side"], cfg["n_objects"], rng)
        x0 = torch.from_numpy(render(digits["train_x"], digits["train_y"], classes, corners, cfg["side"], rng))[:, None]
        t = torch.randint(0, cfg["n_timesteps"], (cfg["batch"],))
        noise = torch.randn_like(x0)
        a = abar[t].view(-1, 1, 1, 1)
        eps, _ = model(a.sqrt() * x0 + (1 - a).sqrt() * noise, t, torch.from_numpy(classes))
        loss = ((eps - noise) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
        if step % max(cfg["steps"] // 10, 1) == 0:
            log(f"train step {step}: loss {np.mean(losses[-50:]):.4f}")
    return model.eval(), losses


def guidance_energy(maps: torch.Tensor, mask: torch.Tensor, prior: torch.Tensor, energy: str, rho: float):
    """(total energy, common energy) per sample for the method's energy."""
    common = common_energy(maps, mask)
    if energy == "common":
        return common, common
    return nonlocal_energy(maps, mask, prior, rho), common


@torch.no_grad()
def _eps(model, z, t, classes):
    return model(z, torch.full((len(z),), t, dtype=torch.long), classes)


def guided_sample(model: Denoiser, classes: torch.Tensor, boxes: torch.Tensor, method: dict, cfg: dict, abar: torch.Tensor,
                  gen: torch.Generator) -> tuple[torch.Tensor, dict]:
    """DDIM (eta = 0) from pure noise; in the first `guided_steps` steps up to `max_iter` inner updates of z_t
    by the method (energy: none | common | nonlocal; update: plain | adaptive), per sample until its common
    energy is below loss_threshold (Layout-Guidance's stopping rule). Returns x_0 and the final maps' stats."""
    n_steps, side = cfg["ddim_steps"], cfg["side"]
    ts = torch.linspace(len(abar) - 1, 0, n_steps).round().long().tolist()
    z = torch.randn(len(classes), 1, side, side, generator=gen)
    half = side // 2
    mask, prior = box_mask(boxes, half, half), box_prior(boxes, half, half, cfg["sigma_frac"])
    guided_maps = None
    for i, t in enumerate(ts):
        a_t = float(abar[t])
        if method["energy"] != "none" and i < cfg["guided_steps"]:
            rho = rho_at(i, cfg["guided_steps"], cfg["rho"])
            for _ in range(cfg["max_iter"]):
                z = z.detach().requires_grad_(True)
                eps, maps = model(z, torch.full((len(z),), t, dtype=torch.long), classes)
                total, common = guidance_energy(maps, mask, prior, method["energy"], rho)
                active = (common > cfg["loss_threshold"]).float().view(-1, 1, 1, 1)
                if active.sum() == 0:
                    break
                (grad,) = torch.autograd.grad((total * cfg["loss_scale"]).sum(), [z])
                with torch.no_grad():
                    if method["update"] == "plain":
                        z_new = plain_step(z, grad, 1.0, a_t)  # loss_scale is already in grad
                    else:
                        score = -eps / (1.0 - a_t) ** 0.5
                        noise = torch.randn(z.shape, generator=gen)
                        z_new = adaptive_step(z, score, grad, noise, cfg["snr"], cfg["nu_max"],
                                              add_noise=cfg["langevin_noise"])
                    z = active * z_new + (1 - active) * z
            z = z.detach()
            if i == cfg["guided_steps"] - 1:
                guided_maps = _eps(model, z, t, classes)[1]
        eps, maps = _eps(model, z, t, classes)
        if guided_maps is None and i == cfg["guided_steps"] - 1:
            guided_maps = maps
        x0 = (z - (1 - a_t) ** 0.5 * eps) / a_t ** 0.5
        x0 = x0.clamp(-1, 1)
        a_prev = float(abar[ts[i + 1]]) if i + 1 < n_steps else 1.0
        z = a_prev ** 0.5 * x0 + (1 - a_prev) ** 0.5 * eps
    return z.clamp(-1, 1), {"maps": guided_maps, "mask": mask}
