"""Procedural shapes and the full-scale loaders on locally built stand-ins."""

import numpy as np
import pytest

from methods.gaprompt.shapes import (
    SAMPLERS,
    TARGET_FAMILIES,
    bunny_views,
    load_datasets_split,
    load_h5_split,
    make_split,
    normalize,
    random_rotation,
    read_bunny,
)


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
    assert np.allclose((np.hypot(t[:, 0], t[:, 1]) - 1.0) ** 2 + t[:, 2] ** 2, 0.35**2)


def test_random_rotation_is_a_rotation():
    R = random_rotation(np.random.default_rng(0))
    assert np.allclose(R @ R.T, np.eye(3)) and np.isclose(np.linalg.det(R), 1)


def test_datasets_loader_on_a_parquet_stand_in(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("datasets")
    rng = np.random.default_rng(0)
    for split in ("train", "test"):
        pd.DataFrame(
            {"points": [rng.normal(size=(40, 3)).tolist() for _ in range(5)], "label": rng.integers(0, 3, 5)}
        ).to_parquet(tmp_path / f"{split}.parquet")
    spec = {
        "path": "parquet",
        "data_files": {s: str(tmp_path / f"{s}.parquet") for s in ("train", "test")},
        "points": "points",
        "label": "label",
    }
    x, y = load_datasets_split(spec, "train", 32)
    assert x.shape == (5, 32, 3) and y.shape == (5,)
    with pytest.raises(ValueError, match="fewer than gaprompt.data.n_points"):
        load_datasets_split(spec, "test", 64)
    with pytest.raises(ValueError, match="no column 'xyz'"):
        load_datasets_split({**spec, "points": "xyz"}, "train", 32)


def test_h5_loader_on_a_stand_in(tmp_path):
    import h5py  # a test dependency (pyproject [test]): the ScanObjectNN path must not go untested

    with h5py.File(tmp_path / "train.h5", "w") as f:
        f["data"] = np.random.default_rng(0).normal(size=(4, 50, 3)).astype(np.float32)
        f["label"] = np.arange(4).reshape(4, 1)
    x, y = load_h5_split(str(tmp_path / "train.h5"), 32)
    assert x.shape == (4, 32, 3) and y.tolist() == [0, 1, 2, 3]


def test_normalize():
    p = normalize(np.array([[2.0, 0, 0], [4.0, 0, 0]]))
    assert np.allclose(p, [[-1, 0, 0], [1, 0, 0]])


def _fake_pygsp_wheel(path, points):
    import io
    import zipfile

    from scipy.io import savemat

    buf = io.BytesIO()
    savemat(buf, {"bunny": points})
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("pygsp/data/pointclouds/bunny.mat", buf.getvalue())
    return path


def test_bunny_views_from_a_wheel_stand_in(tmp_path):
    """The scan is read from the wheel as stored; each view is n points of the scan, up axis y -> z, scaled
    per axis and turned about z only, then centred into the unit sphere; views differ, and are seeded."""
    rng = np.random.default_rng(0)
    scan = rng.normal(size=(300, 3)) * [1.0, 3.0, 0.5]  # y (the scan's up axis) has the largest spread
    pts = read_bunny(_fake_pygsp_wheel(tmp_path / "pygsp.whl", scan))
    assert np.array_equal(pts, scan)
    v = bunny_views(pts, 5, 64, seed=3)
    assert v.shape == (5, 64, 3) and v.dtype == np.float32
    assert np.allclose(v.mean(1), 0, atol=1e-5)
    assert np.allclose(np.linalg.norm(v, axis=2).max(1), 1, atol=1e-5)
    assert not np.allclose(v[0], v[1])
    assert np.array_equal(v, bunny_views(pts, 5, 64, seed=3))
    # the heading turns about z, so the up extent comes from the scan's y: z spread dominates in every view
    # (anisotropic scale 0.6..1.4 cannot undo a 3 : 1 (x) and 6 : 1 (z) ratio)
    sd = v.std(1)
    assert (sd[:, 2] > sd[:, 0]).all() and (sd[:, 2] > sd[:, 1]).all()
    with pytest.raises(ValueError, match="fewer than gaprompt.data.n_points"):
        bunny_views(pts, 1, 400, seed=0)


def test_bunny_wheel_errors_name_the_file(tmp_path):
    from methods.common.data import DownloadError

    bad = _fake_pygsp_wheel(tmp_path / "flat.whl", np.zeros((10, 2)))
    with pytest.raises(ValueError, match="flat.whl.*expected \\(n, 3\\)"):
        read_bunny(bad)
    (tmp_path / "broken.whl").write_bytes(b"not a zip")
    with pytest.raises(DownloadError, match="broken.whl: corrupt"):
        read_bunny(tmp_path / "broken.whl")


def test_data_job_adds_the_bunny_views_to_the_source_set(tmp_path):
    from methods.common.io import load_arrays, read_json
    from methods.gaprompt.data_step import data_job

    wheel = _fake_pygsp_wheel(tmp_path / "pygsp.whl", np.random.default_rng(1).normal(size=(100, 3)))
    data = {
        "kind": "procedural",
        "seed": 0,
        "n_points": 32,
        "source_per_family": 1,
        "train_per_class": 1,
        "test_per_class": 1,
        "perturb": {"noise": 0.0, "occlusion": 0.0, "outliers": 0.0},
        "bunny": {"copies": 3},
    }
    data_job(data, str(tmp_path / "c.npz"), str(tmp_path / "i.json"), bunny_wheel=str(wheel))
    assert load_arrays(tmp_path / "c.npz")["source"].shape == (12 + 3, 32, 3)
    assert read_json(tmp_path / "i.json")["n_bunny_views"] == 3
    with pytest.raises(ValueError, match="needs the PyGSP wheel"):
        data_job(data, str(tmp_path / "c2.npz"), str(tmp_path / "i2.json"))
    assert not (tmp_path / "c2.npz").exists()
