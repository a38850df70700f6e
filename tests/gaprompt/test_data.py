"""Procedural shapes and the full-scale loaders on locally built stand-ins."""
import numpy as np
import pytest

from methods.gaprompt.shapes import (SAMPLERS, TARGET_FAMILIES, load_datasets_split, load_h5_split, make_split,
                                     normalize, random_rotation)


def test_make_split_shapes_labels_and_unit_sphere():
    x, y = make_split(0, TARGET_FAMILIES, 3, 64, {"noise": 0.01, "occlusion": 0.4, "outliers": 0.05})
    assert x.shape == (24, 64, 3) and x.dtype == np.float32
    assert np.bincount(y).tolist() == [3] * 8
    assert np.allclose(x.mean(1), 0, atol=1e-5)
    assert np.allclose(np.linalg.norm(x, axis=2).max(1), 1, atol=1e-5)
    x2, _ = make_split(0, TARGET_FAMILIES, 3, 64, {"noise": 0.01, "occlusion": 0.4, "outliers": 0.05})
    assert np.array_equal(x, x2)


def test_samplers_lie_on_their_surfaces():
    rng = np.random.default_rng(0)
    assert np.allclose(np.linalg.norm(SAMPLERS["sphere"](rng, 100), axis=1), 1)
    b = SAMPLERS["box"](rng, 100)
    assert np.allclose(np.abs(b).max(1), 1)
    t = SAMPLERS["torus"](rng, 100)
    assert np.allclose((np.hypot(t[:, 0], t[:, 1]) - 1.0) ** 2 + t[:, 2] ** 2, 0.35 ** 2)


def test_random_rotation_is_a_rotation():
    R = random_rotation(np.random.default_rng(0))
    assert np.allclose(R @ R.T, np.eye(3)) and np.isclose(np.linalg.det(R), 1)


def test_datasets_loader_on_a_parquet_stand_in(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("datasets")
    rng = np.random.default_rng(0)
    for split in ("train", "test"):
        pd.DataFrame({"points": [rng.normal(size=(40, 3)).tolist() for _ in range(5)],
                      "label": rng.integers(0, 3, 5)}).to_parquet(tmp_path / f"{split}.parquet")
    spec = {"path": "parquet", "data_files": {s: str(tmp_path / f"{s}.parquet") for s in ("train", "test")},
            "points": "points", "label": "label"}
    x, y = load_datasets_split(spec, "train", 32)
    assert x.shape == (5, 32, 3) and y.shape == (5,)
    with pytest.raises(ValueError, match="fewer than gaprompt.data.n_points"):
        load_datasets_split(spec, "test", 64)
    with pytest.raises(ValueError, match="no column 'xyz'"):
        load_datasets_split({**spec, "points": "xyz"}, "train", 32)


def test_h5_loader_on_a_stand_in(tmp_path):
    h5py = pytest.importorskip("h5py", reason="h5py is not installed here; the ScanObjectNN h5 path is untested")
    with h5py.File(tmp_path / "train.h5", "w") as f:
        f["data"] = np.random.default_rng(0).normal(size=(4, 50, 3)).astype(np.float32)
        f["label"] = np.arange(4).reshape(4, 1)
    x, y = load_h5_split(str(tmp_path / "train.h5"), 32)
    assert x.shape == (4, 32, 3) and y.tolist() == [0, 1, 2, 3]


def test_normalize():
    p = normalize(np.array([[2.0, 0, 0], [4.0, 0, 0]]))
    assert np.allclose(p, [[-1, 0, 0], [1, 0, 0]])
