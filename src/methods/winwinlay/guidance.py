"""The guided DDIM loop shared by the tiny digit-canvas denoiser and Stable Diffusion (full scale).

A backbone supplies what the loop needs and nothing else:
  guidance(z, t) -> (eps, text_maps)  the conditional noise prediction and the cross-attention maps
                                      (B, N, H, W) of the N text tokens, with z's autograd graph;
  eps(z, t) -> eps                    the noise prediction used for the denoising step (classifier-free
                                      guidance at full scale), without a graph;
  obj_index (B, K)                    the object tokens' positions among the N text tokens;
  map_size (H, W), clip_x0 (bool), timesteps(n) -> list[int], alphas_cumprod, final_alpha_cumprod.
The energies (common / non-local / BoxDiff) and the updates (plain / adaptive) are the same functions at
every scale.
"""
from __future__ import annotations

import torch

from .energies import box_mask, box_prior, boxdiff_energy, common_energy, corner_margin_at, kl_to_prior, rho_at
from .update import adaptive_step, plain_step

ENERGIES = ("none", "common", "nonlocal", "boxdiff")
UPDATES = ("plain", "adaptive")


def object_maps(text_maps: torch.Tensor, obj_index: torch.Tensor) -> torch.Tensor:
    """(B, K, H, W) maps of the object tokens picked from (B, N, H, W) text-token maps."""
    return text_maps.gather(1, obj_index[..., None, None].expand(-1, -1, *text_maps.shape[-2:]))


def guidance_energy(text_maps: torch.Tensor, obj_index: torch.Tensor, mask: torch.Tensor, prior: torch.Tensor,
                    energy: str, rho: float, cfg: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """(energy of the method, common energy) per sample; the common energy drives the stopping rule."""
    maps = object_maps(text_maps, obj_index)
    common = common_energy(maps, mask)
    if energy == "common":
        return common, common
    if energy == "nonlocal":
        return common + rho * kl_to_prior(maps, prior).mean(-1), common
    if energy == "boxdiff":
        bd = cfg["boxdiff"]
        margin = corner_margin_at(bd["corner_margin"], mask.shape[-2])
        return boxdiff_energy(text_maps, obj_index, mask, bd["top_frac"], margin, bd["temperature"], bd["smooth"]), common
    raise ValueError(f"unknown guidance energy {energy!r}; expected one of {ENERGIES}")


def guided_ddim(backbone, z: torch.Tensor, boxes: torch.Tensor, method: dict, cfg: dict, gen: torch.Generator
                ) -> tuple[torch.Tensor, dict]:
    """DDIM (eta = 0) from z; in the first `guided_steps` steps up to `max_iter` inner updates of z_t by the
    method (energy: none | common | nonlocal | boxdiff; update: plain | adaptive), per sample while its
    common energy is above loss_threshold (Layout-Guidance's stopping rule). Returns the final z_0 and the
    object maps, masks and energies at the end of guidance."""
    if method["energy"] not in ENERGIES or method["update"] not in UPDATES:
        raise ValueError(f"unknown guidance method {method}; energies {ENERGIES}, updates {UPDATES}")
    ts = backbone.timesteps(cfg["ddim_steps"])
    abar = backbone.alphas_cumprod
    h, w = backbone.map_size
    mask = box_mask(boxes, h, w).to(z.device)
    prior = box_prior(boxes, h, w, cfg["sigma_frac"]).to(z.device)
    obj_index = backbone.obj_index.to(z.device)
    n_guided = min(cfg["guided_steps"], len(ts))
    end_maps, trace = None, []
    for i, t in enumerate(ts):
        a_t = float(abar[t])
        if method["energy"] != "none" and i < n_guided:
            rho = rho_at(i, n_guided, cfg["rho"])
            for _ in range(cfg["max_iter"]):
                z = z.detach().requires_grad_(True)
                eps, text_maps = backbone.guidance(z, t)
                total, common = guidance_energy(text_maps, obj_index, mask, prior, method["energy"], rho, cfg)
                trace.append(total.detach())
                active = (common > cfg["loss_threshold"]).to(z.dtype).view(-1, *([1] * (z.dim() - 1)))
                if active.sum() == 0:
                    break
                (grad,) = torch.autograd.grad((total * cfg["loss_scale"]).sum(), [z])
                with torch.no_grad():
                    if method["update"] == "plain":
                        z_new = plain_step(z, grad, 1.0, a_t)  # loss_scale is already in grad
                    else:
                        score = -eps / (1.0 - a_t) ** 0.5
                        noise = torch.randn(z.shape, generator=gen, dtype=z.dtype).to(z.device)
                        z_new = adaptive_step(z, score, grad, noise, cfg["snr"], cfg["nu_max"],
                                              add_noise=cfg["langevin_noise"])
                    z = active * z_new + (1 - active) * z
            z = z.detach()
        if i == max(n_guided, 1) - 1:
            with torch.no_grad():
                end_maps = object_maps(backbone.guidance(z, t)[1], obj_index)
        with torch.no_grad():
            eps = backbone.eps(z, t)
            x0 = (z - (1 - a_t) ** 0.5 * eps) / a_t ** 0.5
            if backbone.clip_x0:
                x0 = x0.clamp(-1, 1)
            a_prev = float(abar[ts[i + 1]]) if i + 1 < len(ts) else backbone.final_alpha_cumprod
            z = a_prev ** 0.5 * x0 + (1 - a_prev) ** 0.5 * eps
    return z, {"maps": end_maps, "mask": mask, "energy_trace": trace}
