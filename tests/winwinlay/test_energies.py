"""Energies of winwinlay against autograd, finite differences and hand-computed values."""

import math

import pytest
import torch

from methods.winwinlay.energies import (
    box_mask,
    box_prior,
    common_energy,
    common_energy_grad,
    in_box_mass,
    kl_to_prior,
    kl_to_prior_grad,
    nonlocal_energy,
    rho_at,
)


@pytest.fixture
def maps():
    gen = torch.Generator().manual_seed(0)
    attn = torch.rand(2, 3, 6, 6, generator=gen, dtype=torch.float64) + 0.05
    boxes = torch.tensor(
        [
            [[0.0, 0.0, 0.5, 0.5], [0.25, 0.5, 1.0, 1.0], [0.5, 0.0, 1.0, 0.34]],
            [[0.1, 0.1, 0.9, 0.9], [0.0, 0.5, 0.5, 1.0], [0.34, 0.34, 0.67, 0.67]],
        ]
    )
    return attn, boxes


def _finite_difference(f, x, h=1e-6):
    grad = torch.zeros_like(x)
    flat, gflat = x.view(-1), grad.view(-1)
    for i in range(flat.numel()):
        old = flat[i].item()
        flat[i] = old + h
        up = f(x).sum().item()
        flat[i] = old - h
        down = f(x).sum().item()
        flat[i] = old
        gflat[i] = (up - down) / (2 * h)
    return grad


def test_box_mask_follows_layout_guidance_indexing():
    mask = box_mask(torch.tensor([[[0.25, 0.5, 0.75, 1.0]]]), 4, 8)
    expected = torch.zeros(4, 8)
    expected[2:4, 2:6] = 1  # rows int(0.5*4):int(1.0*4), columns int(0.25*8):int(0.75*8)
    assert torch.equal(mask[0, 0], expected.float())


def test_common_energy_by_hand():
    attn = torch.zeros(1, 1, 2, 2)
    attn[0, 0] = torch.tensor([[3.0, 1.0], [0.0, 0.0]])
    mask = torch.zeros(1, 1, 2, 2)
    mask[0, 0, 0, 0] = 1
    assert in_box_mass(attn, mask).item() == pytest.approx(0.75)
    assert common_energy(attn, mask).item() == pytest.approx(0.0625)


def test_common_energy_gradient_matches_autograd_and_finite_differences(maps):
    attn, boxes = maps
    mask = box_mask(boxes, 6, 6)
    a = attn.clone().requires_grad_(True)
    (auto,) = torch.autograd.grad(common_energy(a, mask).sum(), [a])
    closed = common_energy_grad(attn, mask)
    fd = _finite_difference(lambda x: common_energy(x, mask), attn.clone())
    assert torch.allclose(closed, auto, atol=1e-10)
    assert torch.allclose(auto, fd, atol=1e-7)


def test_common_gradient_is_uniform_over_the_box(maps):
    """dE/dA is the same on every in-box cell: in logit coordinates the update is proportional to A itself,
    which is why attention that is already high grows fastest (the concentration bias)."""
    attn, boxes = maps
    mask = box_mask(boxes, 6, 6)
    g = common_energy_grad(attn, mask)
    for i in range(2):
        for k in range(3):
            inside = g[i, k][mask[i, k] > 0]
            assert torch.allclose(inside, inside[0].expand_as(inside))
            assert (inside < 0).all()  # raising in-box attention lowers the energy


def test_kl_gradient_matches_autograd_and_finite_differences(maps):
    attn, boxes = maps
    prior = box_prior(boxes, 6, 6, 0.35).double()
    a = attn.clone().requires_grad_(True)
    (auto,) = torch.autograd.grad(kl_to_prior(a, prior).sum(), [a])
    closed = kl_to_prior_grad(attn, prior)
    fd = _finite_difference(lambda x: kl_to_prior(x, prior), attn.clone())
    assert torch.allclose(closed, auto, atol=1e-6)  # the closed form drops the O(EPS / A) terms of log(A + EPS)
    assert torch.allclose(auto, fd, atol=1e-6)


def test_nonlocal_energy_gradient_and_limits(maps):
    attn, boxes = maps
    mask, prior = box_mask(boxes, 6, 6), box_prior(boxes, 6, 6, 0.35).double()
    assert torch.allclose(nonlocal_energy(attn, mask, prior, 0.0), common_energy(attn, mask))
    rho = 0.7
    a = attn.clone().requires_grad_(True)
    (auto,) = torch.autograd.grad(nonlocal_energy(a, mask, prior, rho).sum(), [a])
    closed = common_energy_grad(attn, mask) + rho * kl_to_prior_grad(attn, prior) / attn.shape[1]
    assert torch.allclose(auto, closed, atol=1e-6)
    # the KL term vanishes exactly when the normalised map equals the prior
    assert torch.allclose(kl_to_prior(3.0 * prior, prior), torch.zeros(2, 3, dtype=torch.float64), atol=1e-6)


def test_box_prior_is_a_centred_gaussian():
    prior = box_prior(torch.tensor([[[0.25, 0.25, 0.75, 0.75]]]), 8, 8, 0.35)[0, 0]
    assert prior.sum().item() == pytest.approx(1.0)
    assert torch.allclose(prior, prior.flip(0)) and torch.allclose(prior, prior.T)
    # cells (3,3) and (2,3): centres 0.4375 and 0.3125, box centre 0.5, sd 0.35 * 0.5
    ratio = math.exp(-0.5 * ((0.3125 - 0.5) ** 2 - (0.4375 - 0.5) ** 2) / 0.175**2)
    assert (prior[2, 3] / prior[3, 3]).item() == pytest.approx(ratio)


def test_rho_decays_linearly_to_zero():
    assert rho_at(0, 10, 2.0) == 2.0
    assert rho_at(5, 10, 2.0) == pytest.approx(1.0)
    assert rho_at(10, 10, 2.0) == 0.0 and rho_at(12, 10, 2.0) == 0.0


# --- BoxDiff's constraints ---------------------------------------------------------------------------------------
from methods.winwinlay.energies import (
    boxdiff_cells,
    boxdiff_energy,
    boxdiff_mask,
    boxdiff_terms,  # noqa: E402
    corner_margin_at,
    gaussian_smooth,
    top_fraction_mean,
)


def test_top_fraction_mean_by_hand():
    values = torch.arange(16, dtype=torch.float64).view(1, 1, 4, 4)
    region = torch.zeros(1, 1, 4, 4, dtype=torch.float64)
    region[0, 0, :2, :2] = 1  # values 0, 1, 4, 5; int(0.8 * 4) = 3 largest: 5, 4, 1
    assert top_fraction_mean(values, region, 0.8).item() == pytest.approx(10 / 3)
    assert top_fraction_mean(values, 1 - region, 0.8).item() == pytest.approx(sum(range(15, 6, -1)) / 9)


def test_boxdiff_terms_vanish_on_the_box_indicator_and_count_by_hand():
    cells = boxdiff_cells(torch.tensor([[[0.25, 0.25, 0.75, 0.75]]]), 8, 8)
    assert cells.tolist() == [[[2, 2, 6, 6]]]
    mask = boxdiff_mask(cells, 8, 8).double()
    terms = boxdiff_terms(mask, cells, 0.8, 1)
    for name, v in terms.items():
        assert v.item() == pytest.approx(0.0), name
    # a map that is 0.5 in the box (columns 2..5) and 0 outside: inner 0.5, outer 0; the x projection misses by
    # 0.5 on the box columns; within 1 cell of the edges 2 and 6 are columns 1, 2, 3, 5, 6, 7, of which the box
    # columns 2, 3, 5: 3 x 0.5 / 8 columns
    terms = boxdiff_terms(0.5 * mask, cells, 0.8, 1)
    assert terms["inner"].item() == pytest.approx(0.5)
    assert terms["outer"].item() == pytest.approx(0.0)
    assert terms["corner_x"].item() == pytest.approx(3 * 0.5 / 8)
    assert terms["corner_y"].item() == pytest.approx(3 * 0.5 / 8)
    # the corner terms only count cells within L of the edges: with L = 0 only columns 2 and 6 (one past the box)
    terms = boxdiff_terms(0.5 * mask, cells, 0.8, 0)
    assert terms["corner_x"].item() == pytest.approx(0.5 / 8)


def test_boxdiff_energy_gradient_and_normalisation(maps):
    torch.set_num_threads(1)  # hundreds of tiny evaluations: threading only adds overhead
    attn, boxes = maps
    cells = boxdiff_cells(boxes[1:], 6, 6)
    text = torch.softmax(torch.randn(1, 4, 6, 6, generator=torch.Generator().manual_seed(1), dtype=torch.float64), 1)
    idx = torch.tensor([[1, 3, 2]])
    # the softmax of T x maps across tokens is what the constraints see; T = 0 leaves the maps as they are
    shares = torch.softmax(100 * text, 1).gather(1, idx[..., None, None].expand(-1, -1, 6, 6))
    expected = sum(boxdiff_terms(gaussian_smooth(shares), cells, 0.8, 2).values()).sum(-1)
    assert torch.allclose(boxdiff_energy(text, idx, boxes[1:], 0.8, 2, 100.0, True), expected)
    raw = text.gather(1, idx[..., None, None].expand(-1, -1, 6, 6))
    assert torch.allclose(
        boxdiff_energy(text, idx, boxes[1:], 0.8, 2, 0.0, False),
        sum(boxdiff_terms(raw, cells, 0.8, 2).values()).sum(-1),
    )
    x = text.clone().requires_grad_(True)
    (auto,) = torch.autograd.grad(boxdiff_energy(x, idx, boxes[1:], 0.8, 2, 1.0, True).sum(), [x])
    fd = _finite_difference(lambda y: boxdiff_energy(y, idx, boxes[1:], 0.8, 2, 1.0, True), text.clone())
    assert torch.allclose(auto, fd, atol=1e-5)  # piecewise smooth (top-k, max): generic points


def test_gaussian_smoothing_keeps_constants_and_mass_inside():
    const = torch.full((1, 2, 5, 5), 0.3, dtype=torch.float64)
    assert torch.allclose(gaussian_smooth(const), const)
    spike = torch.zeros(1, 1, 5, 5, dtype=torch.float64)
    spike[0, 0, 2, 2] = 1.0
    out = gaussian_smooth(spike)[0, 0]
    g = math.exp(-((1 / (2 * 0.5)) ** 2))  # BoxDiff's kernel: exp(-(d / (2 sigma))^2)
    assert out[2, 2].item() == pytest.approx(1 / (1 + 2 * g) ** 2)
    assert out.sum().item() == pytest.approx(1.0)
    assert corner_margin_at(6, 16) == 6 and corner_margin_at(6, 12) == 4  # round(4.5) = 4 (banker's)
