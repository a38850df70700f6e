"""Point clouds: procedurally generated shapes (tiny scale) with ScanObjectNN-like perturbations, and the
full-scale loaders (ScanObjectNN / ModelNet40 h5 files; any `datasets` table of points and labels)."""

from __future__ import annotations

import numpy as np

TARGET_FAMILIES = ("sphere", "box", "cylinder", "cone", "torus", "pyramid", "bowl", "dumbbell")
SOURCE_FAMILIES = TARGET_FAMILIES + ("tetrahedron", "capsule", "cross", "ring_pair")


def _unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _sphere(rng, n):
    return _unit(rng.normal(size=(n, 3)))


def _box(rng, n):
    p = rng.uniform(-1, 1, size=(n, 3))
    axis = rng.integers(0, 3, n)
    p[np.arange(n), axis] = rng.choice([-1.0, 1.0], n)
    return p


def _cylinder(rng, n, cap_frac=0.3):
    t = rng.uniform(0, 2 * np.pi, n)
    z = rng.uniform(-1, 1, n)
    r = np.ones(n)
    cap = rng.random(n) < cap_frac
    r[cap] = np.sqrt(rng.random(cap.sum()))
    z[cap] = rng.choice([-1.0, 1.0], cap.sum())
    return np.stack([r * np.cos(t), r * np.sin(t), z], 1)


def _cone(rng, n):
    t = rng.uniform(0, 2 * np.pi, n)
    h = np.sqrt(rng.random(n))  # area grows with the radius
    base = rng.random(n) < 0.3
    r = h.copy()
    z = 1 - 2 * h
    r[base] = np.sqrt(rng.random(base.sum()))
    z[base] = -1.0
    return np.stack([r * np.cos(t), r * np.sin(t), z], 1)


def _torus(rng, n, R=1.0, r=0.35):
    u, v = rng.uniform(0, 2 * np.pi, (2, n))
    return np.stack([(R + r * np.cos(v)) * np.cos(u), (R + r * np.cos(v)) * np.sin(u), r * np.sin(v)], 1)


def _triangles(rng, n, tris):
    tris = np.asarray(tris, dtype=float)
    area = 0.5 * np.linalg.norm(np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0]), axis=1)
    k = rng.choice(len(tris), n, p=area / area.sum())
    a, b = rng.random((2, n))
    flip = a + b > 1
    a[flip], b[flip] = 1 - a[flip], 1 - b[flip]
    t = tris[k]
    return t[:, 0] + a[:, None] * (t[:, 1] - t[:, 0]) + b[:, None] * (t[:, 2] - t[:, 0])


def _pyramid(rng, n):
    c = [[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1]]
    apex = [0, 0, 1]
    tris = [[c[0], c[1], c[2]], [c[0], c[2], c[3]]] + [[c[i], c[(i + 1) % 4], apex] for i in range(4)]
    return _triangles(rng, n, tris)


def _tetrahedron(rng, n):
    v = [[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]]
    return _triangles(rng, n, [[v[0], v[1], v[2]], [v[0], v[1], v[3]], [v[0], v[2], v[3]], [v[1], v[2], v[3]]])


def _bowl(rng, n):
    p = _sphere(rng, n)
    p[:, 2] = -np.abs(p[:, 2])
    return p


def _dumbbell(rng, n):
    m = n // 3
    a = 0.45 * _sphere(rng, m) + [0, 0, 0.8]
    b = 0.45 * _sphere(rng, m) - [0, 0, 0.8]
    bar = _cylinder(rng, n - 2 * m, cap_frac=0.0) * [0.12, 0.12, 0.6]
    return np.concatenate([a, b, bar])


def _capsule(rng, n):
    p = _cylinder(rng, n, cap_frac=0.0) * [0.5, 0.5, 0.7]
    cap = rng.random(n) < 0.4
    s = 0.5 * _sphere(rng, cap.sum())
    s[:, 2] += np.where(s[:, 2] >= 0, 0.7, -0.7)  # hemispherical caps on the ends
    p[cap] = s
    return p


def _cross(rng, n):
    m = n // 3
    parts = [_box(rng, m) * [1, 0.2, 0.2], _box(rng, m) * [0.2, 1, 0.2], _box(rng, n - 2 * m) * [0.2, 0.2, 1]]
    return np.concatenate(parts)


def _ring_pair(rng, n):
    m = n // 2
    a = _torus(rng, m, 0.7, 0.15) + [0.35, 0, 0]
    b = _torus(rng, n - m, 0.7, 0.15)[:, [0, 2, 1]] - [0.35, 0, 0]
    return np.concatenate([a, b])


SAMPLERS = {
    "sphere": _sphere,
    "box": _box,
    "cylinder": _cylinder,
    "cone": _cone,
    "torus": _torus,
    "pyramid": _pyramid,
    "bowl": _bowl,
    "dumbbell": _dumbbell,
    "tetrahedron": _tetrahedron,
    "capsule": _capsule,
    "cross": _cross,
    "ring_pair": _ring_pair,
}


def random_rotation(rng) -> np.ndarray:
    """A uniformly random rotation matrix (QR of a Gaussian matrix with sign fix)."""
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def up_rotation(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def normalize(p: np.ndarray) -> np.ndarray:
    """Centre and scale into the unit sphere (Point-MAE's pc_normalize)."""
    p = p - p.mean(0)
    return p / max(np.linalg.norm(p, axis=1).max(), 1e-9)


def sample_shape(rng, family: str, n_points: int, perturb: dict | None) -> np.ndarray:
    """One cloud of `family`: random anisotropic scale and heading about the up axis; with `perturb`, ScanObjectNN-like
    nuisances (occlusion by a random half-space, Gaussian jitter, background outliers)."""
    oversample = 2 if perturb else 1
    p = SAMPLERS[family](rng, oversample * n_points) * rng.uniform(0.6, 1.4, size=3)
    p = p @ up_rotation(rng.uniform(0, 2 * np.pi)).T  # upright objects, random heading (as ScanObjectNN)
    if perturb:
        if perturb["occlusion"] > 0:  # remove the points beyond a random plane, up to `occlusion` of them
            d = p @ _unit(rng.normal(size=3))
            keep = d <= np.quantile(d, 1 - rng.uniform(0, perturb["occlusion"]))
            p = p[keep]
        n_out = int(perturb["outliers"] * n_points)
        lo, hi = p.min(0), p.max(0)
        p = p[rng.choice(len(p), n_points - n_out, replace=len(p) < n_points - n_out)]
        p = np.concatenate([p, rng.uniform(lo - 0.2, hi + 0.2, size=(n_out, 3))])
        p = p + rng.normal(scale=perturb["noise"], size=p.shape) * np.abs(p).max()
    else:
        p = p[rng.permutation(len(p))[:n_points]]
    return normalize(p).astype(np.float32)


def make_split(seed: int, families, n_per_class: int, n_points: int, perturb: dict | None):
    """(clouds (n, N, 3) float32, labels (n,) int64), classes in the order of `families`."""
    rng = np.random.default_rng(seed)
    clouds, labels = [], []
    for label, fam in enumerate(families):
        for _ in range(n_per_class):
            clouds.append(sample_shape(rng, fam, n_points, perturb))
            labels.append(label)
    return np.stack(clouds), np.asarray(labels, dtype=np.int64)


def read_bunny(wheel: str) -> np.ndarray:
    """The Stanford bunny scan shipped in PyGSP's wheel: (2503, 3) float64, y up."""
    import io

    from scipy.io import loadmat

    from methods.common.data import read_wheel_member

    pts = np.asarray(
        loadmat(io.BytesIO(read_wheel_member(wheel, "pygsp/data/pointclouds/bunny.mat")))["bunny"], dtype=np.float64
    )
    if pts.ndim != 2 or pts.shape[1] != 3:
        raise ValueError(f"{wheel}: pygsp/data/pointclouds/bunny.mat holds {pts.shape}, expected (n, 3) points")
    return pts


def bunny_views(points: np.ndarray, copies: int, n_points: int, seed: int) -> np.ndarray:
    """`copies` views of a scanned object, drawn as the procedural source shapes are: n_points
    points without replacement, random anisotropic scale and heading about the up axis (the scan's y
    axis is turned to z first), centred and scaled into the unit sphere. (copies, n_points, 3) float32."""
    if len(points) < n_points:
        raise ValueError(f"the scan has {len(points)} points, fewer than gaprompt.data.n_points ({n_points})")
    rng = np.random.default_rng(seed)
    y_to_z = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
    out = []
    for _ in range(copies):
        p = points[rng.choice(len(points), n_points, replace=False)] @ y_to_z.T
        p = p * rng.uniform(0.6, 1.4, size=3)
        out.append(normalize(p @ up_rotation(rng.uniform(0, 2 * np.pi)).T).astype(np.float32))
    return np.stack(out)


# ---------------------------------------------------------------- full scale: the paper's datasets
def load_h5_split(path: str, n_points: int) -> tuple[np.ndarray, np.ndarray]:
    """ScanObjectNN (training/test_objectdataset*.h5) or ModelNet40 (ply_data_*.h5): 'data' (n, P, 3),
    'label' (n,) or (n, 1); keeps the first n_points of each cloud, normalised into the unit sphere."""
    try:
        import h5py
    except ImportError as e:
        raise ImportError(
            f"{path}: reading ScanObjectNN/ModelNet40 .h5 files needs h5py; "
            "pip install h5py (or convert the files to parquet for the `datasets` loader)"
        ) from e
    with h5py.File(path, "r") as f:
        for key in ("data", "label"):
            if key not in f:
                raise ValueError(f"{path}: no {key!r} dataset; expected ScanObjectNN/ModelNet40 h5 layout")
        data, label = np.asarray(f["data"]), np.asarray(f["label"]).reshape(-1)
    return _finish(data, label, n_points, path)


def load_datasets_split(spec: dict, split: str, n_points: int) -> tuple[np.ndarray, np.ndarray]:
    """A split through Hugging Face `datasets.load_dataset` (a hub name, or a builder such as
    'parquet' with data_files): column spec['points'] holds (P, 3) arrays, spec['label'] the class."""
    import datasets

    kw = {"data_files": spec["data_files"]} if spec.get("data_files") else {}
    ds = datasets.load_dataset(spec["path"], split=split, **kw)
    for key in ("points", "label"):
        if spec[key] not in ds.column_names:
            raise ValueError(
                f"dataset {spec['path']} ({split}): no column {spec[key]!r} (columns: {ds.column_names}); "
                f"set gaprompt.data.full.{key}"
            )
    data = np.stack([np.asarray(p, dtype=np.float32).reshape(-1, 3) for p in ds[spec["points"]]])
    return _finish(data, np.asarray(ds[spec["label"]]), n_points, spec["path"])


def _finish(data, label, n_points, name):
    if data.ndim != 3 or data.shape[-1] < 3:
        raise ValueError(f"{name}: point array has shape {data.shape}; expected (n, points, 3)")
    if data.shape[1] < n_points:
        raise ValueError(f"{name}: clouds have {data.shape[1]} points, fewer than gaprompt.data.n_points={n_points}")
    clouds = np.stack([normalize(c[:n_points, :3]) for c in data]).astype(np.float32)
    return clouds, label.astype(np.int64)
