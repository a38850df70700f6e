"""FPS, kNN, Chamfer, interpolation and the shift against brute-force references computed here."""

import itertools

import numpy as np
import pytest
import torch

from methods.gaprompt.geometry import chamfer_l2, farthest_point_sample, group, idw_interpolate, knn, nerf_encoding
from methods.gaprompt.model import ShiftNet

torch.set_num_threads(1)


def brute_fps(p: np.ndarray, s: int) -> list[int]:
    """Textbook FPS: start at 0; repeatedly take the point farthest from the chosen set."""
    chosen = [0]
    for _ in range(s - 1):
        d = np.min([[np.sum((q - p[c]) ** 2) for c in chosen] for q in p], axis=1)
        chosen.append(int(np.argmax(d)))
    return chosen


def test_fps_matches_brute_force():
    rng = np.random.default_rng(0)
    pts = rng.normal(size=(3, 60, 3))
    idx = farthest_point_sample(torch.tensor(pts), 12).numpy()
    for b in range(3):
        assert idx[b].tolist() == brute_fps(pts[b], 12)


def test_fps_spreads_points_on_a_line():
    line = torch.tensor([[[float(i), 0, 0] for i in range(11)]])
    assert farthest_point_sample(line, 3)[0].tolist() == [0, 10, 5]


def test_knn_matches_brute_force_sort():
    rng = np.random.default_rng(1)
    ref, q = rng.normal(size=(2, 40, 3)), rng.normal(size=(2, 5, 3))
    idx = knn(torch.tensor(q), torch.tensor(ref), 7).numpy()
    for b, m in itertools.product(range(2), range(5)):
        d = ((ref[b] - q[b, m]) ** 2).sum(1)
        assert idx[b, m].tolist() == np.argsort(d)[:7].tolist()


def test_group_is_centre_relative_and_contains_the_centre():
    pts = torch.tensor(np.random.default_rng(2).normal(size=(2, 50, 3)))
    neigh, center, idx, cidx = group(pts, 8, 5)
    assert neigh.shape == (2, 8, 5, 3)
    assert torch.allclose(
        neigh[:, :, 0], torch.zeros(2, 8, 3, dtype=neigh.dtype)
    )  # nearest neighbour of a centre is itself
    assert torch.equal(idx[:, :, 0], cidx)


def test_chamfer_on_hand_made_sets():
    a = torch.tensor([[[0.0, 0, 0], [1, 0, 0]]])
    b = torch.tensor([[[0.0, 0, 0], [1, 0, 0], [3, 0, 0]]])
    # a->b: both points matched exactly (0); b->a: 0, 0 and (3-1)^2 = 4, mean 4/3
    assert chamfer_l2(a, b).item() == pytest.approx(4 / 3)
    assert chamfer_l2(b, b).item() == pytest.approx(0.0, abs=1e-12)
    c = torch.tensor([[[0.0, 0, 2]]])
    assert chamfer_l2(c, a).item() == pytest.approx(4 + (4 + 5) / 2)


def test_idw_interpolation_reference_and_exact_at_sources():
    rng = np.random.default_rng(3)
    src, dst, f = rng.normal(size=(1, 6, 3)), rng.normal(size=(1, 4, 3)), rng.normal(size=(1, 6, 2))
    out = idw_interpolate(torch.tensor(dst), torch.tensor(src), torch.tensor(f), 3, 1e-8).numpy()
    for n in range(4):
        d2 = ((src[0] - dst[0, n]) ** 2).sum(1)
        nn3 = np.argsort(d2)[:3]
        w = 1 / (d2[nn3] + 1e-8)
        assert np.allclose(out[0, n], (w[:, None] * f[0, nn3]).sum(0) / w.sum())
    at_src = idw_interpolate(torch.tensor(src), torch.tensor(src), torch.tensor(f), 3, 1e-12).numpy()
    assert np.allclose(at_src, f, atol=1e-6)


def test_nerf_encoding_layout():
    x = torch.tensor([[0.3, -0.2, 0.5]])
    e = nerf_encoding(x, 4)
    assert e.shape == (1, 27)
    assert torch.allclose(e[:, :3], x)
    assert torch.allclose(e[:, 3 + 2 * 3 * 2 : 3 + 2 * 3 * 2 + 3], torch.sin(4 * x))  # level 2, sine


def test_shift_is_multiplicative():
    """y = x + p MLP(f) x: the origin never moves, and p = 0 is the identity."""
    torch.manual_seed(0)
    net = ShiftNet(8, 4, perturbation=0.8).eval()
    x = torch.randn(2, 64, 3)
    x[:, 5] = 0.0
    y, g = net(x)
    assert torch.equal(y[:, 5], torch.zeros(2, 3))
    assert g.shape == (2, net.shape_dim)
    net.perturbation = 0.0
    assert torch.equal(net(x)[0], x)
