"""The trivial nulls and ablations the claims read (V3): what they measure and that the ablations run the
method's own schedule (equal budget)."""

import numpy as np
import torch

from methods.winwinlay.guidance import guided_ddim
from methods.winwinlay.toy import box_mask_grid, box_metrics, random_boxes, toy_experiment

TOY = {
    "grid": 8,
    "n_maps": 4,
    "box_side": [2, 4],
    "init_mean": -2.0,
    "init_scale": 2.0,
    "field_length": 2.0,
    "sigma_frac": 0.35,
    "rho": 1.0,
    "rho_decay_frac": 0.5,
    "lr": 100.0,
    "steps": 3,
    "latent_dim": 8,
    "params": ["logits"],
    "boxdiff": {"top_frac": 0.2, "corner_margin": 1, "temperature": 0.0, "smooth": True},
}


def test_toy_no_guidance_null_is_the_initial_maps_and_random_boxes_read_another_box():
    metrics, examples = toy_experiment(0, TOY)
    boxes = torch.from_numpy(examples["boxes"])
    init = torch.from_numpy(examples["init"])[:, None]
    want = box_metrics(init, box_mask_grid(boxes, 8, 8), boxes)
    for k in ("mass", "coverage", "entropy"):
        assert np.isclose(metrics[f"{k}_init_logits"], float(np.mean(want[k])))
    maps = torch.from_numpy(examples["maps_nonlocal_logits"])[:, None]
    other = boxes.roll(1, 0)
    rand = box_metrics(maps, box_mask_grid(other, 8, 8), other)
    assert np.isclose(metrics["coverage_randbox_nonlocal_logits"], float(np.mean(rand["coverage"])))


def test_box_mask_grid_marks_the_box_cells():
    boxes = random_boxes(3, (2, 4), 8, torch.Generator().manual_seed(0))
    mask = box_mask_grid(boxes, 8, 8)
    sides = (boxes[:, 0, 2:] - boxes[:, 0, :2]) * 8
    assert torch.allclose(mask.sum((-2, -1))[:, 0], sides.prod(-1).round())


class Counting:
    """A backbone whose object map is sigmoid(z): counts guidance passes (gradient steps) and eps passes."""

    clip_x0 = True
    final_alpha_cumprod = 1.0
    map_size = (8, 8)

    def __init__(self, n):
        self.obj_index = torch.ones(n, 1, dtype=torch.long)
        self.alphas_cumprod = torch.linspace(0.99, 0.1, 20)
        self.guidance_calls, self.eps_calls = 0, 0

    def timesteps(self, n_steps):
        return torch.linspace(19, 0, n_steps).round().long().tolist()

    def guidance(self, z, t):
        self.guidance_calls += 1
        a = torch.sigmoid(z)
        return 0.1 * z, torch.stack([1 - a[:, 0], a[:, 0]], 1)[:, None]

    def eps(self, z, t):
        self.eps_calls += 1
        return 0.1 * z


def test_ablations_and_unguided_null_run_the_methods_schedule():
    """WinWinLay (non-local + adaptive), its two single ablations and Layout-Guidance take the same number of
    guidance passes (max_iter in each of guided_steps steps when no sample stops early) and the same DDIM steps;
    unguided sampling takes the same DDIM steps and no guidance pass beyond reading the maps."""
    cfg = {
        "ddim_steps": 6,
        "guided_steps": 3,
        "max_iter": 2,
        "loss_threshold": -1.0,  # never stop early: the budget is the schedule's cap
        "loss_scale": 30.0,
        "layer_reduction": "per_map",
        "sigma_frac": 0.35,
        "rho": 1.0,
        "snr": 0.06,
        "nu_max": 100.0,
        "langevin_noise": True,
        "boxdiff": {"max_iter_to_alter": 4},
    }
    boxes = torch.tensor([[[0.0, 0.0, 0.5, 0.5]]] * 2)
    counts = {}
    for energy, update in [
        ("nonlocal", "adaptive"),
        ("nonlocal", "plain"),
        ("common", "adaptive"),
        ("common", "plain"),
        ("none", "plain"),
    ]:
        bb = Counting(2)
        guided_ddim(
            bb,
            torch.zeros(2, 1, 8, 8),
            boxes,
            {"energy": energy, "update": update},
            cfg,
            torch.Generator().manual_seed(0),
        )
        counts[(energy, update)] = (bb.guidance_calls, bb.eps_calls)
    assert len({v for k, v in counts.items() if k[0] != "none"}) == 1
    guidance, eps = counts[("nonlocal", "adaptive")]
    assert guidance == cfg["guided_steps"] * cfg["max_iter"] + 1  # + the pass that reads the final maps
    assert counts[("none", "plain")] == (1, eps) and eps == cfg["ddim_steps"]
