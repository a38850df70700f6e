"""Experiment 2 data: canvases with two digits of different classes pasted in non-overlapping boxes.

Digits are scikit-learn's 1,797 8x8 digits (shipped with the package, pixel values 0..16); a canvas is
side x side with background -1 and ink up to +1. The layout of a canvas (classes, boxes) is what the
guided sampler is asked to reproduce; the model itself sees only the classes (a "prompt"), never the boxes.
"""

from __future__ import annotations

import numpy as np

DIGIT = 8


def load_digit_images(test_fraction: float, seed: int) -> dict[str, np.ndarray]:
    """sklearn digits scaled to [-1, 1], split into train/test by a seeded permutation."""
    from sklearn.datasets import load_digits

    d = load_digits()
    images = (d.images.astype(np.float32) / 16.0) * 2.0 - 1.0
    perm = np.random.default_rng(seed).permutation(len(images))
    n_test = int(round(test_fraction * len(images)))
    test, train = perm[:n_test], perm[n_test:]
    return {"train_x": images[train], "train_y": d.target[train], "test_x": images[test], "test_y": d.target[test]}


def sample_layouts(n: int, side: int, n_objects: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(n, K) distinct classes and (n, K, 2) top-left corners (row, col) of non-overlapping 8x8 boxes."""
    classes = np.stack([rng.choice(10, n_objects, replace=False) for _ in range(n)])
    corners = np.zeros((n, n_objects, 2), dtype=np.int64)
    for i in range(n):
        while True:  # rejection sampling of the whole layout (a greedy placement can get stuck)
            cand = rng.integers(0, side - DIGIT + 1, size=(n_objects, 2))
            if all(
                abs(cand[a, 0] - cand[b, 0]) >= DIGIT or abs(cand[a, 1] - cand[b, 1]) >= DIGIT
                for a in range(n_objects)
                for b in range(a)
            ):
                corners[i] = cand
                break
    return classes, corners


def render(
    images: np.ndarray,
    labels: np.ndarray,
    classes: np.ndarray,
    corners: np.ndarray,
    side: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """(n, side, side) canvases: for each requested class a random digit image of that class at its corner."""
    by_class = [np.flatnonzero(labels == c) for c in range(10)]
    out = -np.ones((len(classes), side, side), dtype=np.float32)
    for i in range(len(classes)):
        for k, c in enumerate(classes[i]):
            img = images[rng.choice(by_class[c])]
            r, col = corners[i, k]
            out[i, r : r + DIGIT, col : col + DIGIT] = np.maximum(out[i, r : r + DIGIT, col : col + DIGIT], img)
    return out


def corners_to_boxes(corners: np.ndarray, side: int) -> np.ndarray:
    """(n, K, 4) fractional boxes (x0, y0, x1, y1) of the 8x8 digit boxes."""
    r, c = corners[..., 0], corners[..., 1]
    return np.stack([c, r, c + DIGIT, r + DIGIT], -1).astype(np.float32) / side
