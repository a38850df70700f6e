"""The guided DDIM loop shared by the tiny digit-canvas denoiser and Stable Diffusion (full scale).

A backbone supplies what the loop needs and nothing else:
  guidance(z, t) -> (eps, text_maps)  the conditional noise prediction and the cross-attention maps
                                      (B, L, N, H, W) of the N text tokens in L attention maps (layers, or
                                      layers x heads), with z's autograd graph;
  eps(z, t) -> eps                    the noise prediction used for the denoising step (classifier-free
                                      guidance at full scale), without a graph;
  obj_index (B, K)                    the object tokens' positions among the N text tokens;
  map_size (H, W), clip_x0 (bool), timesteps(n) -> list[int], alphas_cumprod, final_alpha_cumprod.
The energies (common / non-local / BoxDiff) and the updates (plain / adaptive / BoxDiff's) are the same
functions at every scale. Layout-Guidance's loss is computed on each of the L maps and averaged
(compute_ca_loss); BoxDiff averages the maps first (aggregate_attention), as does the non-local KL term.
"""

from __future__ import annotations

import torch

from .energies import box_mask, box_prior, boxdiff_energy, common_energy, corner_margin_at, kl_to_prior, rho_at
from .update import adaptive_step, plain_step

ENERGIES = ("none", "common", "nonlocal", "boxdiff")
UPDATES = ("plain", "adaptive", "boxdiff")
LAYER_REDUCTIONS = ("per_map", "averaged")


def object_maps(text_maps: torch.Tensor, obj_index: torch.Tensor) -> torch.Tensor:
    """(B, K, H, W) maps of the object tokens picked from (B, N, H, W) text-token maps."""
    return text_maps.gather(1, obj_index[..., None, None].expand(-1, -1, *text_maps.shape[-2:]))


def layout_guidance_energy(
    text_maps: torch.Tensor, obj_index: torch.Tensor, mask: torch.Tensor, reduction: str = "per_map"
) -> torch.Tensor:
    """Layout-Guidance's compute_ca_loss (without its loss scale) per sample: (1 - in-box share)^2 on each of the
    L maps (B, L, N, H, W), averaged over maps and objects ('per_map', the official code); 'averaged' takes
    the energy of the map average instead (the third-party WinWinLay re-implementation)."""
    if reduction == "averaged":
        return common_energy(object_maps(text_maps.mean(1), obj_index), mask)
    if reduction != "per_map":
        raise ValueError(f"winwinlay.sampling.layer_reduction {reduction!r} is not one of {LAYER_REDUCTIONS}")
    per_map = [common_energy(object_maps(text_maps[:, m], obj_index), mask) for m in range(text_maps.shape[1])]
    return torch.stack(per_map, 0).mean(0)


def guidance_energy(
    text_maps: torch.Tensor,
    obj_index: torch.Tensor,
    mask: torch.Tensor,
    prior: torch.Tensor,
    energy: str,
    rho: float,
    cfg: dict,
    boxes: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(energy of the method, Layout-Guidance's energy) per sample; the latter drives the stopping rule."""
    common = layout_guidance_energy(text_maps, obj_index, mask, cfg.get("layer_reduction", "per_map"))
    if energy == "common":
        return common, common
    maps = text_maps.mean(1)
    if energy == "nonlocal":
        return common + rho * kl_to_prior(object_maps(maps, obj_index), prior).mean(-1), common
    if energy == "boxdiff":
        return boxdiff_total(maps, obj_index, boxes, cfg), common
    raise ValueError(f"unknown guidance energy {energy!r}; expected one of {ENERGIES}")


def boxdiff_total(maps: torch.Tensor, obj_index: torch.Tensor, boxes: torch.Tensor, cfg: dict, per_token=False):
    bd = cfg["boxdiff"]
    margin = corner_margin_at(bd["corner_margin"], maps.shape[-2])
    return boxdiff_energy(maps, obj_index, boxes, bd["top_frac"], margin, bd["temperature"], bd["smooth"], per_token)


def _per_sample(x: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return x.to(like.dtype).view(-1, *([1] * (like.dim() - 1)))


def layout_guidance_step(backbone, z, t, a_t, last_loss, energy, update, rho, ctx, cfg, gen):
    """Layout-Guidance's inner loop at one denoising step, per sample: while the loss last computed for a sample
    is above loss_threshold (the official `while loss / loss_scale > threshold and iteration < max_iter`) take
    the energy's gradient at the current z and update. The last loss is carried over from step to step: once a
    sample's loss has been seen below the threshold it is never updated again (the official loop never
    recomputes it). Returns z and the per-sample last losses."""
    for _ in range(cfg["max_iter"]):
        active = last_loss > cfg["loss_threshold"]
        if not active.any():
            break
        z = z.detach().requires_grad_(True)
        eps, text_maps = backbone.guidance(z, t)
        total, common = guidance_energy(
            text_maps, ctx["obj_index"], ctx["mask"], ctx["prior"], energy, rho, cfg, ctx["boxes"]
        )
        ctx["trace"].append(total.detach())
        (grad,) = torch.autograd.grad((total * cfg["loss_scale"]).sum(), [z])
        with torch.no_grad():
            if update == "plain":
                z_new = plain_step(z, grad, 1.0, a_t)  # loss_scale is already in grad
            else:
                score = -eps / (1.0 - a_t) ** 0.5
                noise = torch.randn(z.shape, generator=gen, dtype=z.dtype).to(z.device)
                z_new = adaptive_step(z, score, grad, noise, cfg["snr"], cfg["nu_max"], add_noise=cfg["langevin_noise"])
            mask = _per_sample(active, z)
            z = mask * z_new + (1 - mask) * z
            last_loss = torch.where(active, common.detach(), last_loss)
    return z.detach(), last_loss


def boxdiff_step_size(i: int, n_steps: int, bd: dict) -> float:
    """BoxDiff's step at denoising step i: scale_factor sqrt(np.linspace(*scale_range, n_steps)[i])."""
    lo, hi = bd["scale_range"]
    return bd["scale_factor"] * (lo + (hi - lo) * i / max(n_steps - 1, 1)) ** 0.5


def boxdiff_step(backbone, z, t, i, n_steps, ctx, cfg):
    """BoxDiff's update at denoising step i (sd_pipeline_boxdiff.py __call__): at the steps of `thresholds`,
    samples whose largest inner-box loss exceeds 1 - threshold are first refined (Attend-and-Excite's iterative
    refinement: gradient steps on that largest inner-box loss while its last value exceeds 1 - threshold, at
    most max_refinement_steps); then one step z <- z - scale_factor sqrt(s_i) grad L, s = linspace(1, 0.5,
    steps) = scale_range. After a refinement the official loss adds the refined inner-box terms to the outer-box and corner
    terms of the graph before the refinement, so its gradient at the refined z is the inner-box terms' alone;
    that is kept."""
    bd = cfg["boxdiff"]
    step = boxdiff_step_size(i, n_steps, bd)
    refined = torch.zeros(z.shape[0], dtype=torch.bool, device=z.device)
    thresholds = {int(k): v for k, v in bd["thresholds"].items()}
    if bd["refine"] and i in thresholds:
        target = max(0.0, 1.0 - thresholds[i])
        active = None
        for _ in range(bd["max_refinement_steps"]):
            z = z.detach().requires_grad_(True)
            _, text_maps = backbone.guidance(z, t)
            _, inner = boxdiff_total(text_maps.mean(1), ctx["obj_index"], ctx["boxes"], cfg, per_token=True)
            loss_fg = inner.max(-1).values
            if active is None:  # the trigger: the largest inner-box loss at the step's latent
                active = loss_fg > target
            if not active.any():
                break
            refined |= active
            (grad,) = torch.autograd.grad(loss_fg.sum(), [z])
            with torch.no_grad():
                z = z - step * grad * _per_sample(active, z)
            active = active & (loss_fg.detach() > target)  # the official loop tests the loss before the update
    z = z.detach().requires_grad_(True)
    _, text_maps = backbone.guidance(z, t)
    per_token, inner = boxdiff_total(text_maps.mean(1), ctx["obj_index"], ctx["boxes"], cfg, per_token=True)
    loss = torch.where(refined, inner.sum(-1), per_token.sum(-1))
    ctx["trace"].append(per_token.sum(-1).detach())
    (grad,) = torch.autograd.grad(loss.sum(), [z])
    return (z - step * grad).detach()


def guided_ddim(
    backbone, z: torch.Tensor, boxes: torch.Tensor, method: dict, cfg: dict, gen: torch.Generator
) -> tuple[torch.Tensor, dict]:
    """DDIM (eta = 0) from z with the method's guidance of z_t: Layout-Guidance's schedule (in the first
    `guided_steps` steps, up to `max_iter` inner updates while the loss is above loss_threshold) for the plain
    and adaptive updates, BoxDiff's (one step in each of the first boxdiff.max_iter_to_alter steps, with its
    refinement) for the boxdiff update. Returns the final z_0 and the object maps (averaged over the L maps),
    masks and energies at the end of guidance."""
    if method["energy"] not in ENERGIES or method["update"] not in UPDATES:
        raise ValueError(f"unknown guidance method {method}; energies {ENERGIES}, updates {UPDATES}")
    if method["update"] == "boxdiff" and method["energy"] not in ("boxdiff", "none"):
        raise ValueError(f"guidance method {method}: BoxDiff's update goes with BoxDiff's energy only")
    ts = backbone.timesteps(cfg["ddim_steps"])
    abar = backbone.alphas_cumprod
    h, w = backbone.map_size
    mask = box_mask(boxes, h, w).to(z.device)
    ctx = {
        "mask": mask,
        "prior": box_prior(boxes, h, w, cfg["sigma_frac"]).to(z.device),
        "obj_index": backbone.obj_index.to(z.device),
        "boxes": boxes,
        "trace": [],
    }
    boxdiff_update = method["update"] == "boxdiff"
    n_guided = min(cfg["boxdiff"]["max_iter_to_alter"] if boxdiff_update else cfg["guided_steps"], len(ts))
    last_loss = torch.full((z.shape[0],), float("inf"), device=z.device)
    end_maps = None
    for i, t in enumerate(ts):
        a_t = float(abar[t])
        if method["energy"] != "none" and i < n_guided:
            if boxdiff_update:
                z = boxdiff_step(backbone, z, t, i, len(ts), ctx, cfg)
            else:
                z, last_loss = layout_guidance_step(
                    backbone,
                    z,
                    t,
                    a_t,
                    last_loss,
                    method["energy"],
                    method["update"],
                    rho_at(i, n_guided, cfg["rho"]),
                    ctx,
                    cfg,
                    gen,
                )
        if i == max(n_guided, 1) - 1:
            with torch.no_grad():
                end_maps = object_maps(backbone.guidance(z, t)[1].mean(1), ctx["obj_index"])
        with torch.no_grad():
            eps = backbone.eps(z, t)
            x0 = (z - (1 - a_t) ** 0.5 * eps) / a_t**0.5
            if backbone.clip_x0:
                x0 = x0.clamp(-1, 1)
            a_prev = float(abar[ts[i + 1]]) if i + 1 < len(ts) else backbone.final_alpha_cumprod
            z = a_prev**0.5 * x0 + (1 - a_prev) ** 0.5 * eps
    return z, {"maps": end_maps, "mask": mask, "energy_trace": ctx["trace"]}
