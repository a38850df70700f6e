"""Metrics against independent reference values; the digits loaders."""

import gzip
import zipfile

import numpy as np
import pytest
import torch

from methods.binary_denoising import data
from methods.binary_denoising.metrics import classifier_score, energy_distance, ess_per_step, weight_tv


def test_energy_distance_is_near_zero_for_one_law_and_positive_between_laws():
    g = torch.Generator().manual_seed(0)
    a = torch.where(torch.rand(800, 10, generator=g) < 0.5, 1.0, -1.0)
    b = torch.where(torch.rand(800, 10, generator=g) < 0.5, 1.0, -1.0)
    c = torch.where(torch.rand(800, 10, generator=g) < 0.8, 1.0, -1.0)
    assert abs(energy_distance(a, b)) < 0.01
    assert energy_distance(a, c) > 0.1


def test_ess_of_a_long_ar1_chain_matches_theory():
    rng = np.random.default_rng(0)
    rho, T, C = 0.6, 4000, 20
    x = np.zeros((T, C))
    for t in range(1, T):
        x[t] = rho * x[t - 1] + rng.standard_normal(C)
    assert ess_per_step(x) == pytest.approx((1 - rho) / (1 + rho), rel=0.1)


def test_weight_tv_and_classifier_score_reference_values():
    assert weight_tv(torch.tensor([0, 0, 1, 1]), torch.tensor([0.5, 0.5])) == pytest.approx(0.0)
    assert weight_tv(torch.tensor([0, 0, 0, 0]), torch.tensor([0.5, 0.5])) == pytest.approx(0.5)
    assert classifier_score(torch.eye(4)) == pytest.approx(4.0, rel=1e-6)  # confident and uniform over classes
    assert classifier_score(torch.full((5, 4), 0.25)) == pytest.approx(1.0)


def test_wheel_csv_is_read_and_binarised(tmp_path):
    wheel = tmp_path / "fake-1.0-py3-none-any.whl"
    rows = "0,9,16,3\n12,0,7,5\n"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("pkg/data/d.csv.gz", gzip.compress(rows.encode()))
    x, y = data.load_digits({"source": "wheel", "member": "pkg/data/d.csv.gz", "threshold": 7}, str(wheel))
    assert y.tolist() == [3, 5]
    assert x.tolist() == [[-1, 1, 1], [1, -1, -1]]


def test_npz_mnist_loader(tmp_path):
    """The full-scale source: an MNIST npz archive in Keras' layout, read and binarised."""
    rng = np.random.default_rng(0)
    path = tmp_path / "mnist.npz"
    np.savez(
        path,
        x_train=rng.integers(0, 256, (7, 28, 28), dtype=np.uint8),
        y_train=np.arange(7, dtype=np.uint8),
        x_test=np.zeros((1, 28, 28), np.uint8),
        y_test=np.zeros(1, np.uint8),
    )
    x, y = data.load_digits({"source": "npz", "threshold": 127}, str(path))
    assert x.shape == (7, 784) and set(np.unique(x)) <= {-1.0, 1.0} and y.tolist() == list(range(7))
    with np.load(path) as z:
        assert (x[3] == np.where(z["x_train"][3].reshape(-1) > 127, 1.0, -1.0)).all()
    np.savez(tmp_path / "bad.npz", images=np.zeros((1, 28, 28)))
    with pytest.raises(ValueError, match="x_train and y_train"):
        data.load_digits({"source": "npz", "threshold": 127}, str(tmp_path / "bad.npz"))
