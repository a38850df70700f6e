"""Toy box metrics, IoU, Frechet distance, canvases and the guided sampler's bookkeeping."""

import numpy as np
import pytest
import torch

from methods.winwinlay.canvas import corners_to_boxes, render, sample_layouts
from methods.winwinlay.diffusion import alpha_bars, guided_sample
from methods.winwinlay.energies import box_mask
from methods.winwinlay.evaluate import box_iou, frechet_distance, windows
from methods.winwinlay.model import Denoiser
from methods.winwinlay.toy import box_metrics


def test_box_metrics_uniform_and_single_cell():
    boxes = torch.tensor([[[0.25, 0.25, 0.75, 0.75]]])
    mask = box_mask(boxes, 8, 8)
    uniform = mask * 0.9 + 0.001
    m = box_metrics(uniform, mask, boxes)
    assert m["coverage"][0] == pytest.approx(1.0)
    assert m["entropy"][0] == pytest.approx(1.0)
    assert m["centroid_offset"][0] == pytest.approx(0.0, abs=1e-6)
    spike = torch.zeros(1, 1, 8, 8)
    spike[0, 0, 2, 2] = 1.0  # one corner cell of the 4x4 box
    m = box_metrics(spike, mask, boxes)
    assert m["coverage"][0] == pytest.approx(1 / 16)
    assert m["entropy"][0] == pytest.approx(0.0, abs=1e-6)
    assert m["mass"][0] == pytest.approx(1.0)
    # centroid at cell centre 2.5/8 against box centre 0.5, box side 0.5, both axes
    assert m["centroid_offset"][0] == pytest.approx(np.sqrt(2) * (0.5 - 2.5 / 8) / 0.5)


def test_box_iou_by_hand():
    a = np.array([[0, 0], [0, 0], [0, 0]])
    b = np.array([[0, 0], [4, 0], [8, 0]])
    assert np.allclose(box_iou(a, b), [1.0, 32 / 96, 0.0])


def test_frechet_distance_identities():
    rng = np.random.default_rng(0)
    f = rng.normal(size=(400, 3))
    assert frechet_distance(f, f) == pytest.approx(0.0, abs=1e-6)
    shift = np.array([1.0, -2.0, 0.5])
    assert frechet_distance(f, f + shift) == pytest.approx(float((shift**2).sum()), rel=1e-6)


def test_layouts_do_not_overlap_and_render_in_their_boxes():
    rng = np.random.default_rng(0)
    classes, corners = sample_layouts(50, 16, 2, rng)
    assert (classes[:, 0] != classes[:, 1]).all()
    assert (np.abs(corners[:, 0] - corners[:, 1]).max(1) >= 8).all()
    digits = np.ones((10, 8, 8), dtype=np.float32)
    canv = render(digits, np.arange(10), classes, corners, 16, rng)
    assert (canv == 1).sum() == 50 * 2 * 64  # all ink inside the two boxes, none overlapping
    boxes = corners_to_boxes(corners, 16)
    assert np.allclose(boxes[..., 2] - boxes[..., 0], 0.5)
    assert windows(canv).shape == (50, 9, 9, 64)


def test_model_maps_are_attention_shares():
    torch.manual_seed(0)
    model = Denoiser(channels=8, token_dim=8)
    eps, maps = model(torch.randn(2, 1, 16, 16), torch.tensor([3, 7]), torch.tensor([[1, 2], [3, 4]]))
    assert eps.shape == (2, 1, 16, 16) and maps.shape == (2, 2, 3, 8, 8)  # 2 layers; background + two objects
    assert (maps >= 0).all() and torch.allclose(maps.sum(2), torch.ones(2, 2, 8, 8))  # softmax over the tokens


def test_unguided_sampler_ignores_the_boxes_and_guidance_moves_attention():
    torch.manual_seed(0)
    model = Denoiser(channels=8, token_dim=8).eval().requires_grad_(False)
    cfg = {
        "side": 16,
        "ddim_steps": 4,
        "guided_steps": 2,
        "max_iter": 3,
        "loss_threshold": 0.0,
        "loss_scale": 30.0,
        "sigma_frac": 0.35,
        "rho": 1.0,
        "snr": 0.06,
        "nu_max": 100.0,
        "langevin_noise": True,
    }
    classes = torch.tensor([[1, 2], [3, 4]])
    boxes = torch.tensor([[[0.0, 0.0, 0.5, 0.5], [0.5, 0.5, 1.0, 1.0]]] * 2)
    abar = alpha_bars(20, 1e-4, 0.02)
    none = {"energy": "none", "update": "plain"}
    a, _ = guided_sample(model, classes, boxes, none, cfg, abar, torch.Generator().manual_seed(1))
    b, _ = guided_sample(model, classes, boxes.flip(1), none, cfg, abar, torch.Generator().manual_seed(1))
    assert torch.equal(a, b)
    lg = {"energy": "common", "update": "plain"}
    c, _ = guided_sample(model, classes, boxes, lg, cfg, abar, torch.Generator().manual_seed(1))
    assert not torch.equal(a, c)


def _svd_pca(x: np.ndarray, n: int):
    """The reference the library replaced: mean and top right-singular vectors of the centred data (numpy SVD)."""
    mean = x.mean(0)
    return mean, np.linalg.svd(x - mean, full_matrices=False)[2][:n].T


def test_pca_is_scikit_learns_and_equals_the_svd_up_to_sign():
    """fit_pca (scikit-learn PCA, full SVD) gives the numpy-SVD mean and directions, each up to its sign, so the
    Frechet distances between projected feature sets are the same (it is invariant to flipping a coordinate)."""
    from methods.winwinlay.evaluate import fit_pca

    rng = np.random.default_rng(0)
    canv = (rng.normal(size=(300, 24, 24)) * np.linspace(0.1, 2.0, 576).reshape(24, 24)).astype(np.float32)
    other = rng.normal(size=(100, 24, 24)).astype(np.float32)
    mean, dirs = fit_pca(canv, 16)
    ref_mean, ref_dirs = _svd_pca(canv.reshape(300, -1).astype(np.float64), 16)
    assert dirs.shape == (576, 16)
    np.testing.assert_allclose(mean, ref_mean, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.abs((dirs * ref_dirs).sum(0)), 1.0, rtol=0, atol=1e-10)  # same axes
    np.testing.assert_allclose(np.abs(dirs), np.abs(ref_dirs), rtol=0, atol=1e-10)
    feats = lambda c, m, d: (c.reshape(len(c), -1) - m) @ d  # noqa: E731
    assert frechet_distance(feats(canv, mean, dirs), feats(other, mean, dirs)) == pytest.approx(
        frechet_distance(feats(canv, ref_mean, ref_dirs), feats(other, ref_mean, ref_dirs)), rel=1e-10
    )


def test_frechet_distance_of_diagonal_gaussians_in_closed_form():
    """For diagonal covariances the Frechet distance is |mu1 - mu2|^2 + sum (s1 - s2)^2 (scipy's sqrtm of the
    covariance product, as in FID, against the closed form)."""
    rng = np.random.default_rng(1)
    z = rng.normal(size=(20000, 3))
    z = (z - z.mean(0)) / z.std(0, ddof=1)  # exactly unit sample variances
    z = np.linalg.qr(z - z.mean(0))[0] * np.sqrt(len(z) - 1)  # and exactly uncorrelated columns
    s1, s2 = np.array([1.0, 2.0, 0.5]), np.array([3.0, 1.0, 0.5])
    mu1, mu2 = np.array([0.0, 1.0, -1.0]), np.array([2.0, 0.0, -1.0])
    fd = frechet_distance(mu1 + z * s1, mu2 + z * s2)
    assert fd == pytest.approx(((mu1 - mu2) ** 2).sum() + ((s1 - s2) ** 2).sum(), rel=1e-9)
