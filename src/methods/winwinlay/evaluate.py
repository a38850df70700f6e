"""Experiment 2 metrics: layout precision from a sliding-window digit detector trained in the DAG, and a
realism proxy (Frechet distance in PCA features fitted on real canvases; not FID, which needs Inception)."""

from __future__ import annotations

import numpy as np
from scipy import linalg

from .canvas import DIGIT, render, sample_layouts

BACKGROUND = 10


def detector_training_set(digits: dict, side: int, n_objects: int, n_background: int, rng: np.random.Generator):
    """Positives: every training digit (class 0..9); negatives (class 10): 8x8 windows of training canvases
    that are at least 3 pixels off every digit box in row or column (partial digits and empty background)."""
    xs, ys = [digits["train_x"].reshape(len(digits["train_x"]), -1)], [digits["train_y"]]
    neg = []
    while len(neg) < n_background:
        classes, corners = sample_layouts(64, side, n_objects, rng)
        canv = render(digits["train_x"], digits["train_y"], classes, corners, side, rng)
        for i in range(len(canv)):
            r, c = rng.integers(0, side - DIGIT + 1, size=2)
            if all(abs(r - r2) >= 3 or abs(c - c2) >= 3 for r2, c2 in corners[i]):
                neg.append(canv[i, r : r + DIGIT, c : c + DIGIT].ravel())
    xs.append(np.array(neg[:n_background]))
    ys.append(np.full(n_background, BACKGROUND))
    return np.concatenate(xs), np.concatenate(ys)


def train_detector(digits: dict, side: int, n_objects: int, n_background: int, seed: int) -> dict:
    """Multinomial logistic regression over 8x8 windows (11 classes: digits and background), stored as arrays."""
    from sklearn.linear_model import LogisticRegression

    x, y = detector_training_set(digits, side, n_objects, n_background, np.random.default_rng(seed))
    clf = LogisticRegression(max_iter=2000, C=1.0).fit(x, y)
    assert list(clf.classes_) == list(range(BACKGROUND + 1)), f"detector classes {clf.classes_}"
    return {"coef": clf.coef_.astype(np.float64), "intercept": clf.intercept_.astype(np.float64)}


def detector_proba(detector: dict, x: np.ndarray) -> np.ndarray:
    """(n, 11) class probabilities of flattened 8x8 windows x (n, 64)."""
    logits = x @ detector["coef"].T + detector["intercept"]
    logits -= logits.max(1, keepdims=True)
    e = np.exp(logits)
    return e / e.sum(1, keepdims=True)


def windows(canvases: np.ndarray) -> np.ndarray:
    """(n, P, P, 64) every 8x8 window of each canvas, P = side - 7."""
    w = np.lib.stride_tricks.sliding_window_view(canvases, (DIGIT, DIGIT), axis=(1, 2))
    return w.reshape(*w.shape[:3], DIGIT * DIGIT)


def detect(detector: dict, canvases: np.ndarray, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each requested class the window of highest detector probability: corners (n, K, 2), probs (n, K)."""
    win = windows(canvases)
    n, p = win.shape[:2]
    prob = detector_proba(detector, win.reshape(-1, DIGIT * DIGIT)).reshape(n, p, p, -1)
    corners = np.zeros((*classes.shape, 2), dtype=np.int64)
    best = np.zeros(classes.shape)
    for i in range(n):
        for k, c in enumerate(classes[i]):
            pk = prob[i, :, :, c]
            idx = np.unravel_index(np.argmax(pk), pk.shape)
            corners[i, k], best[i, k] = idx, pk[idx]
    return corners, best


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of 8x8 boxes given by their top-left corners (..., 2), paired element-wise (the detector's box for an
    object against the requested one; Sec. 5's layout precision). torchvision.ops.box_iou computes the same for
    general boxes (all pairs), but torchvision's wheels are built against a specific torch release and the one
    the registry offers does not import beside this project's torch, so the 8x8 closed form stays here
    (tested by hand in tests/winwinlay/test_metrics.py)."""
    dr = np.clip(DIGIT - np.abs(a[..., 0] - b[..., 0]), 0, None)
    dc = np.clip(DIGIT - np.abs(a[..., 1] - b[..., 1]), 0, None)
    inter = dr * dc
    return inter / (2 * DIGIT * DIGIT - inter)


def fit_pca(canvases: np.ndarray, n_components: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and top principal directions (d, n) of flattened real canvases (scikit-learn's PCA, exact SVD; kept
    as arrays so the checkpoint holds tensors only). Features are (x - mean) @ directions, PCA.transform."""
    from sklearn.decomposition import PCA

    x = canvases.reshape(len(canvases), -1).astype(np.float64)
    pca = PCA(n_components=n_components, svd_solver="full").fit(x)
    return pca.mean_, pca.components_.T


def frechet_distance(f1: np.ndarray, f2: np.ndarray) -> float:
    """||mu1 - mu2||^2 + tr(S1 + S2 - 2 (S1 S2)^(1/2)) between Gaussian fits of two feature sets (FID's formula;
    the matrix square root is scipy.linalg.sqrtm, as in the reference FID code; torchmetrics' FID needs Inception
    features and is not installed here)."""
    mu1, mu2 = f1.mean(0), f2.mean(0)
    s1, s2 = np.cov(f1, rowvar=False), np.cov(f2, rowvar=False)
    covmean = linalg.sqrtm(s1 @ s2)
    covmean = np.real(covmean)
    return float(((mu1 - mu2) ** 2).sum() + np.trace(s1 + s2 - 2 * covmean))
