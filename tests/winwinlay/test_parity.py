"""Golden-value parity with the official code of the energies WinWinLay is compared with (WinWinLay itself has
no official code; its non-local term and adaptive update follow a third-party re-implementation, assumed).

Values obtained by running, on CPU in a scratch checkout (diffusers imports stubbed; nothing official is in this
project):
  * showlab/BoxDiff at b0d5d3b534418aa3fc71b9a16e5b575c0b2ee3b6, pipeline/sd_pipeline_boxdiff.py
    BoxDiffPipeline._compute_max_attention_per_index (smooth_attentions True, sigma 0.5, kernel 3,
    normalize_eot False) and _compute_loss, on MAPS (16 x 16 x 77 probabilities) with token indices [2, 5] and
    pixel boxes BBOX, config P / L = 0.2 / 1 (its defaults) and 0.8 / 6 -> BOXDIFF_*; utils/gaussian_smoothing.py
    GaussianSmoothing(1, 3, 0.5).weight -> KERNEL; its step size 20 sqrt(np.linspace(1, 0.5, 50)[i]) for
    i = 0, 10, 24, 49 -> STEP_SIZES;
  * silent-chen/layout-guidance at 50fcf7525fa59681510d90759136e7e470903136, utils.py compute_ca_loss on two
    up layers of 2 heads at 16 x 16 (attn_maps_mid empty) -> LG_UP and on one mid layer of 2 heads at 8 x 8
    -> LG_MID, boxes [[0.1, 0.2, 0.5, 0.8]], [[0.55, 0.4, 0.95, 0.8]], object positions [[2], [5]].
Inputs are drawn below from one seeded generator, in the order the script drew them. Tolerance 1e-5 relative
in fp32 (1e-6 absolute for the small top-k means).
"""

import torch

from methods.winwinlay.energies import (
    box_mask,
    boxdiff_cells,
    boxdiff_energy,
    boxdiff_terms,
    gaussian_kernel,
    gaussian_smooth,
)
from methods.winwinlay.guidance import boxdiff_step_size, layout_guidance_energy

BBOX = [[40, 80, 300, 330], [250, 24, 500, 270]]
LG_BOXES = [[0.1, 0.2, 0.5, 0.8], [0.55, 0.4, 0.95, 0.8]]
BOXDIFF = {
    (0.2, 1): {
        "fg": [0.101002998650074, 0.020484047010540962],
        "bg": [0.10016876459121704, 0.07863865792751312],
        "dist_x": [0.16675563156604767, 0.17969352006912231],
        "dist_y": [0.2082442045211792, 0.16698315739631653],
        "loss_fg": 0.9795159697532654,
        "loss": 2.7789969444274902,
    },
    (0.8, 6): {
        "fg": [0.02377467043697834, 0.005132767371833324],
        "bg": [0.024915767833590508, 0.019659986719489098],
        "dist_x": [0.4997241199016571, 0.5203426480293274],
        "dist_y": [0.5356815457344055, 0.46931591629981995],
        "loss_fg": 0.994867205619812,
        "loss": 4.040732383728027,
    },
}
KERNEL = [
    [0.044919226318597794, 0.12210312485694885, 0.044919226318597794],
    [0.12210312485694885, 0.3319106996059418, 0.12210312485694885],
    [0.044919226318597794, 0.12210312485694885, 0.044919226318597794],
]
STEP_SIZES = [20.0, 18.952141659173712, 17.379321515137768, 14.142135623730951]
LG_UP, LG_MID = 0.6427218914031982, 0.5696079730987549


def inputs():
    g = torch.Generator().manual_seed(0)
    maps = torch.softmax(3.0 * torch.randn(16, 16, 77, generator=g), -1)
    up = [torch.softmax(2.0 * torch.randn(2, 256, 77, generator=g), -1) for _ in range(2)]
    mid = torch.softmax(2.0 * torch.randn(2, 64, 77, generator=g), -1)
    return maps, up, mid


def close(ours, golden, atol=1e-6):
    return torch.allclose(
        torch.as_tensor(ours, dtype=torch.float32), torch.tensor(golden, dtype=torch.float32), rtol=1e-5, atol=atol
    )


def boxdiff_case():
    maps = inputs()[0]
    text = maps[:, :, 1:-1].permute(2, 0, 1)[None]  # tokens 1 .. 75, as BoxDiff's attention_for_text
    obj = torch.tensor([[1, 4]])  # token indices 2 and 5 less the start token
    boxes = torch.tensor([BBOX], dtype=torch.float32) / 512
    return text, obj, boxes


def test_boxdiff_terms_match_official():
    text, obj, boxes = boxdiff_case()
    shares = gaussian_smooth(torch.softmax(100 * text, 1).gather(1, obj[..., None, None].expand(-1, -1, 16, 16)))
    for (p, margin), gold in BOXDIFF.items():
        terms = boxdiff_terms(shares, boxdiff_cells(boxes, 16, 16), p, margin)
        assert close(1 - terms["inner"][0], gold["fg"])
        assert close(terms["outer"][0], gold["bg"])
        assert close(terms["corner_x"][0], gold["dist_x"]) and close(terms["corner_y"][0], gold["dist_y"])
        assert close(terms["inner"][0].max(), gold["loss_fg"])
        assert close(boxdiff_energy(text, obj, boxes, p, margin, 100.0, True)[0], gold["loss"])


def test_boxdiff_boxes_are_rounded_as_official():
    """Regression: round(b / 32) with halves to even (80 / 32 = 2.5 -> 2, 24 / 32 = 0.75 -> 1), not int()."""
    assert boxdiff_cells(torch.tensor([BBOX], dtype=torch.float32) / 512, 16, 16).tolist() == [
        [[1, 2, 9, 10], [8, 1, 16, 8]]
    ]


def test_boxdiff_smoothing_kernel_matches_official():
    """Regression: exp(-(d / (2 sigma))^2), not exp(-d^2 / (2 sigma^2))."""
    assert close(gaussian_kernel(0.5, 3), KERNEL, atol=1e-7)


def test_boxdiff_step_sizes_match_official():
    bd = {"scale_factor": 20.0, "scale_range": [1.0, 0.5]}
    assert close([boxdiff_step_size(i, 50, bd) for i in (0, 10, 24, 49)], STEP_SIZES)


def test_layout_guidance_loss_matches_official():
    _, up, mid = inputs()
    boxes = torch.tensor([LG_BOXES])
    obj = torch.tensor([[2, 5]])
    up_maps = torch.stack(up, 0).reshape(4, 16, 16, 77).permute(0, 3, 1, 2)[None]  # (1, layers x heads, 77, 16, 16)
    assert close(layout_guidance_energy(up_maps, obj, box_mask(boxes, 16, 16)), [LG_UP])
    mid_maps = mid.reshape(2, 8, 8, 77).permute(0, 3, 1, 2)[None]
    assert close(layout_guidance_energy(mid_maps, obj, box_mask(boxes, 8, 8)), [LG_MID])
    # regression: the official loss is per map; the energy of the averaged map differs
    assert not close(layout_guidance_energy(up_maps, obj, box_mask(boxes, 16, 16), "averaged"), [LG_UP])
