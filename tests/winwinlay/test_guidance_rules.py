"""Regression tests for the guidance schedules taken over from the official code: Layout-Guidance's stopping
rule (inference.py: the while-loop tests the loss computed before the last update, and a loss seen below the
threshold is never recomputed) and BoxDiff's update with Attend-and-Excite's refinement."""

import torch

from methods.winwinlay.energies import box_mask, box_prior
from methods.winwinlay.guidance import boxdiff_step, boxdiff_total, layout_guidance_step

BOXES = torch.tensor([[[0.0, 0.0, 0.5, 0.5]]] * 2)
CFG = {
    "max_iter": 5,
    "loss_threshold": 0.2,
    "loss_scale": 30.0,
    "layer_reduction": "per_map",
    "boxdiff": {
        "top_frac": 0.2,
        "corner_margin": 1,
        "temperature": 0.0,
        "smooth": True,
        "scale_factor": 20.0,
        "scale_range": [1.0, 0.5],
        "max_iter_to_alter": 25,
        "refine": True,
        "thresholds": {0: 0.8},
        "max_refinement_steps": 3,
    },
}


class Sigmoid:
    """A backbone whose object map is sigmoid(z) against a background token; counts its guidance passes."""

    obj_index = torch.tensor([[1], [1]])
    map_size = (4, 4)

    def __init__(self):
        self.calls = []

    def guidance(self, z, t):
        self.calls.append(z.detach().clone())
        a = torch.sigmoid(z)
        return torch.zeros_like(z), torch.stack([1 - a[:, 0], a[:, 0]], 1)[:, None]  # (B, L = 1, N = 2, H, W)


def ctx():
    return {
        "mask": box_mask(BOXES, 4, 4),
        "prior": box_prior(BOXES, 4, 4, 0.35),
        "obj_index": Sigmoid.obj_index,
        "boxes": BOXES,
        "trace": [],
    }


def latents():
    z = torch.zeros(2, 1, 4, 4)
    z[0] = -8.0
    z[0, :, :2, :2] = 8.0  # sample 0: attention already in its box (loss ~ 0)
    return z


def test_layout_guidance_updates_once_more_then_never_again():
    bb = Sigmoid()
    z, last = layout_guidance_step(
        bb, latents(), 0, 0.5, torch.full((2,), float("inf")), "common", "plain", 0.0, ctx(), CFG, None
    )
    assert last[0] < CFG["loss_threshold"] < last[1]
    assert len(bb.calls) == CFG["max_iter"]
    assert not torch.equal(bb.calls[1][0], bb.calls[0][0])  # updated once although its loss was already low ...
    assert all(torch.equal(c[0], bb.calls[1][0]) for c in bb.calls[2:])  # ... then left alone
    assert not torch.equal(bb.calls[-1][1], bb.calls[-2][1])
    z2, _ = layout_guidance_step(bb, z, 0, 0.5, last, "common", "plain", 0.0, ctx(), CFG, None)
    assert torch.equal(z2[0], z[0]) and not torch.equal(z2[1], z[1])  # the next step does not revisit it


def test_boxdiff_refinement_runs_at_threshold_steps_only():
    z = torch.zeros(2, 1, 4, 4)  # inner-box loss 1 - 0.5 > 1 - 0.8: both samples are refined at step 0
    bb = Sigmoid()
    boxdiff_step(bb, z, 0, 0, 50, ctx(), CFG)
    assert len(bb.calls) == CFG["boxdiff"]["max_refinement_steps"] + 1
    bb = Sigmoid()
    boxdiff_step(bb, z, 0, 1, 50, ctx(), CFG)
    assert len(bb.calls) == 1
    bb = Sigmoid()
    boxdiff_step(bb, z, 0, 0, 50, ctx(), {**CFG, "boxdiff": {**CFG["boxdiff"], "refine": False}})
    assert len(bb.calls) == 1


def test_boxdiff_update_after_refinement_follows_the_inner_box_terms_alone():
    bb = Sigmoid()
    z = torch.zeros(2, 1, 4, 4)
    out = boxdiff_step(bb, z, 0, 0, 50, ctx(), CFG)
    zr = bb.calls[-1].requires_grad_(True)  # the refined latent of the last pass
    _, inner = boxdiff_total(bb.guidance(zr, 0)[1].mean(1), Sigmoid.obj_index, BOXES, CFG, per_token=True)
    (g,) = torch.autograd.grad(inner.sum(), [zr])
    assert torch.allclose(out, zr.detach() - 20.0 * g, atol=1e-6)


def test_variant_override_names_a_bad_key():
    import pytest

    from methods.common.config import apply_override

    cfg = {"boxdiff": {"top_frac": 0.2}, "methods": {"boxdiff": {"update": "boxdiff"}}}
    apply_override(cfg, "methods.boxdiff.update=plain", "winwinlay")
    apply_override(cfg, "boxdiff.top_frac=0.8", "winwinlay")
    assert cfg == {"boxdiff": {"top_frac": 0.8}, "methods": {"boxdiff": {"update": "plain"}}}
    with pytest.raises(KeyError, match="no section 'sampling'"):
        apply_override(cfg, "sampling.rho=2", "winwinlay")
