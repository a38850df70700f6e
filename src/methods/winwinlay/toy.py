"""Experiment 1 (direct): optimise one token's attention map under the common energy, under the
non-local energy and under BoxDiff's constraints and measure where the in-box attention lands (the paper's theoretical point: the common
energy is satisfied by attention piled into part of the box; the non-local prior spreads it over the box).

A map is A = sigmoid(l) on an H x W grid (the object token's share against a background token, as a
cross-attention softmax over [background, object] gives it). The logits l are either free ("logits") or
l = b + W z with z in R^d and W a fixed smooth random map ("latent", mimicking backpropagation through a
network to its input). Initial logits are smooth random fields: attention starts as blobs, as real maps do.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .energies import box_prior, boxdiff_energy, common_energy, corner_margin_at, in_box_mass, nonlocal_energy, rho_at

ENERGIES = ("common", "nonlocal", "boxdiff")


def smooth_fields(n: int, height: int, width: int, length: float, gen: torch.Generator) -> torch.Tensor:
    """(n, H, W) unit-variance Gaussian random fields with a squared-exponential kernel of `length` cells."""
    ys, xs = torch.meshgrid(
        torch.arange(height, dtype=torch.float64), torch.arange(width, dtype=torch.float64), indexing="ij"
    )
    pts = torch.stack([ys.flatten(), xs.flatten()], 1)
    cov = torch.exp(-0.5 * torch.cdist(pts, pts) ** 2 / length**2) + 1e-5 * torch.eye(
        height * width, dtype=torch.float64
    )
    chol = torch.linalg.cholesky(cov)
    white = torch.randn(height * width, n, generator=gen, dtype=torch.float64)
    return (chol @ white).T.reshape(n, height, width).float()


def random_boxes(n: int, side_range: tuple[int, int], grid: int, gen: torch.Generator) -> torch.Tensor:
    """(n, 1, 4) fractional boxes whose sides are whole cells in side_range (inclusive)."""
    out = torch.zeros(n, 1, 4)
    for i in range(n):
        w, h = (int(torch.randint(side_range[0], side_range[1] + 1, (1,), generator=gen)) for _ in range(2))
        x0 = int(torch.randint(0, grid - w + 1, (1,), generator=gen))
        y0 = int(torch.randint(0, grid - h + 1, (1,), generator=gen))
        out[i, 0] = torch.tensor([x0, y0, x0 + w, y0 + h], dtype=torch.float32) / grid
    return out


def box_metrics(attn: torch.Tensor, mask: torch.Tensor, boxes: torch.Tensor) -> dict[str, np.ndarray]:
    """Per-map metrics of where the attention sits (attn, mask (B, 1, H, W)): in-box mass; coverage = fraction
    of box cells holding at least half the uniform-in-box share of the in-box mass; in-box entropy / log|box|;
    centroid offset from the box centre in box sides."""
    h, w = attn.shape[-2:]
    inside = attn * mask
    q = inside / inside.sum((-2, -1), keepdim=True).clamp_min(1e-12)
    n_cells = mask.sum((-2, -1))
    coverage = ((q >= 0.5 / n_cells[..., None, None]) & (mask > 0)).float().sum((-2, -1)) / n_cells
    entropy = -(q * torch.log(q.clamp_min(1e-12))).sum((-2, -1)) / torch.log(n_cells.clamp_min(2))
    ys = (torch.arange(h, dtype=torch.float32) + 0.5) / h
    xs = (torch.arange(w, dtype=torch.float32) + 0.5) / w
    cy, cx = (q.sum(-1) * ys).sum(-1), (q.sum(-2) * xs).sum(-1)
    x0, y0, x1, y1 = boxes.unbind(-1)
    offset = torch.sqrt(((cx - (x0 + x1) / 2) / (x1 - x0)) ** 2 + ((cy - (y0 + y1) / 2) / (y1 - y0)) ** 2)
    return {
        "mass": in_box_mass(attn, mask)[:, 0].numpy(),
        "coverage": coverage[:, 0].numpy(),
        "entropy": entropy[:, 0].numpy(),
        "centroid_offset": offset[:, 0].numpy(),
    }


def attention_coverage(maps: torch.Tensor, mask: torch.Tensor, boxes: torch.Tensor) -> dict[str, float]:
    """Mean over objects of box_metrics applied to a model's maps (B, K, H, W) at the end of guidance (CPU)."""
    b, k, h, w = maps.shape
    m = box_metrics(maps.reshape(b * k, 1, h, w), mask.reshape(b * k, 1, h, w), boxes.reshape(b * k, 1, 4))
    return {key: float(np.mean(v)) for key, v in m.items()}


def box_mask_grid(boxes: torch.Tensor, h: int, w: int) -> torch.Tensor:
    """(n, 1, H, W) 0/1 masks of fractional boxes (n, 1, 4) whose sides are whole cells."""
    mask = torch.zeros(len(boxes), 1, h, w)
    for i in range(len(boxes)):
        x0, y0, x1, y1 = boxes[i, 0].tolist()
        mask[i, 0, int(y0 * h) : int(y1 * h), int(x0 * w) : int(x1 * w)] = 1.0
    return mask


def optimise_maps(
    init_logits: torch.Tensor, boxes: torch.Tensor, energy: str, param: str, cfg: dict, gen: torch.Generator
) -> torch.Tensor:
    """Plain gradient descent on the logits (or the latent z) under one energy; returns the final maps (B, 1, H, W)."""
    n, h, w = init_logits.shape
    mask_grid = box_mask_grid(boxes, h, w)
    prior = box_prior(boxes, h, w, cfg["sigma_frac"])
    if param == "logits":
        var = init_logits.clone().requires_grad_(True)
        to_logits = lambda v: v  # noqa: E731
    else:
        basis = smooth_fields(cfg["latent_dim"], h, w, cfg["field_length"], gen) / math.sqrt(cfg["latent_dim"])
        var = torch.zeros(n, cfg["latent_dim"], requires_grad=True)
        base = init_logits.clone()
        to_logits = lambda v: base + torch.einsum("nd,dhw->nhw", v, basis)  # noqa: E731
    n_decay = int(cfg["rho_decay_frac"] * cfg["steps"])
    for step in range(cfg["steps"]):
        attn = torch.sigmoid(to_logits(var))[:, None]
        if energy == "common":
            e = common_energy(attn, mask_grid)
        elif energy == "boxdiff":  # the map is the token's share against the background token
            bd = cfg["boxdiff"]
            e = boxdiff_energy(
                torch.cat([1 - attn, attn], 1),
                torch.ones(n, 1, dtype=torch.long),
                boxes,
                bd["top_frac"],
                corner_margin_at(bd["corner_margin"], h),
                bd["temperature"],
                bd["smooth"],
            )
        else:
            e = nonlocal_energy(attn, mask_grid, prior, rho_at(step, n_decay, cfg["rho"]))
        (grad,) = torch.autograd.grad(e.sum(), [var])
        with torch.no_grad():
            var -= cfg["lr"] * grad  # plain gradient steps, as guidance takes them
    with torch.no_grad():
        return torch.sigmoid(to_logits(var))[:, None], mask_grid


def toy_experiment(seed: int, cfg: dict) -> tuple[dict, dict]:
    """All maps of one seed under each energy and parameterisation: metrics and example maps."""
    gen = torch.Generator().manual_seed(seed)
    g = cfg["grid"]
    boxes = random_boxes(cfg["n_maps"], tuple(cfg["box_side"]), g, gen)
    init = cfg["init_mean"] + cfg["init_scale"] * smooth_fields(cfg["n_maps"], g, g, cfg["field_length"], gen)
    metrics, examples = {}, {"boxes": boxes.numpy(), "init": torch.sigmoid(init).numpy()}
    other = boxes.roll(1, 0)  # each map's "random box": the box drawn for another map of the seed
    for param in cfg["params"]:
        # trivial null, no guidance at all: the initial maps (both parameterisations start from them, z = 0)
        for k, v in box_metrics(torch.sigmoid(init)[:, None], box_mask_grid(boxes, g, g), boxes).items():
            metrics[f"{k}_init_{param}"] = float(np.mean(v))
        for energy in ENERGIES:
            attn, mask = optimise_maps(init, boxes, energy, param, cfg, torch.Generator().manual_seed(seed + 1))
            for k, v in box_metrics(attn, mask, boxes).items():
                metrics[f"{k}_{energy}_{param}"] = float(np.mean(v))
            if energy == "nonlocal":  # trivial null: the non-local maps read in a box they were not guided to
                for k, v in box_metrics(attn, box_mask_grid(other, g, g), other).items():
                    metrics[f"{k}_randbox_{energy}_{param}"] = float(np.mean(v))
            examples[f"maps_{energy}_{param}"] = attn[:, 0].numpy()
    return metrics, examples
