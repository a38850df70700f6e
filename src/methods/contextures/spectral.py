"""Contexts, their exact singular functions, the context-quality metric tau, and probes.

Zhai et al., "Contextures: Representations from Contexts" (ICML 2025, arXiv 2505.01557), read from
the June-2025 arXiv text (no official code for the metric):

- A context P+(a|x) (A = X: the pretraining inputs themselves; or A = Y: the label, the supervised
  context of Section 3) induces the expectation operator
  T g(x) = E[g(A) | x]. With P_X uniform on the n pretraining points and P_A(a) = mean_x P+(a|x), its
  singular decomposition is the SVD of M = D_X^{1/2} P+ D_A^{-1/2} (Section 2): s_0 = 1 with constant
  singular functions, then s_1 >= s_2 >= ...; left functions mu_i(x) = sqrt(n) U[x, i], right
  nu_i(a) = V[a, i] / sqrt(P_A(a)).
- Out-of-sample extension (Nystrom): mu_i(x) = s_i^{-1} sum_a P+(a|x) nu_i(a).
- The metric (Eq. 4, Section 5.2): tau_d = 1 / (1 - s_{d+1}^2) + beta * sum_{i<=d} s_i^2 / sum_{i<=d0} s_i^2,
  tau = min over 1 <= d <= d0 of tau_d (s_0 excluded), beta = 1, d0 = min(512, n / 2); an operator of
  finite rank r (the label context: r = number of classes) has s_i = 0 for i >= r, so d0 <= r - 1.
- Label context (A = Y): P+(y|x) is the label distribution of the k nearest pretraining points of x
  (a k-NN estimate of P(Y|x); a regression target is cut into quantile bins of the pretraining
  labels). Only the pretraining labels enter it, so an input's own label is never read at test time;
  k sets the association strength (k = 1 on the pretraining set: the labels themselves, s_i = 1).
- Evaluation protocol (Section 5.3): the encoder is the exact top-d functions; a ridge probe on them;
  err_{d*} = min over the d grid of the test MSE.
"""

from __future__ import annotations

import numpy as np


def sq_distances(x: np.ndarray, anchors: np.ndarray) -> np.ndarray:
    """||x_i - a_j||^2 (n x m), clipped at 0."""
    d2 = (x**2).sum(1)[:, None] + (anchors**2).sum(1)[None, :] - 2.0 * x @ anchors.T
    return np.maximum(d2, 0.0)


def knn_context(x: np.ndarray, anchors: np.ndarray, k: int, exclude_self: bool = False) -> np.ndarray:
    """P+(a|x) = 1/k on the k nearest anchors of each row of x (Euclidean)."""
    d2 = sq_distances(x, anchors)
    if exclude_self:
        np.fill_diagonal(d2, np.inf)
    idx = np.argpartition(d2, k - 1, axis=1)[:, :k]
    p = np.zeros_like(d2)
    np.put_along_axis(p, idx, 1.0 / k, axis=1)
    return p


def rbf_context(x: np.ndarray, anchors: np.ndarray, gamma: float) -> np.ndarray:
    """P+(a|x) proportional to exp(-gamma ||x - a||^2), normalised over the anchors."""
    d2 = sq_distances(x, anchors)
    logits = -gamma * d2
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    return p / p.sum(axis=1, keepdims=True)


def feature_masks(n_features: int, ratio: float, n_masks: int, seed: int = 0) -> np.ndarray:
    """(n_masks, n_features) boolean keep-masks, each hiding round(ratio * n_features) features (at least
    one kept). Fixed by `seed`, so that the pretraining rows and new rows see the same masking context."""
    rng = np.random.default_rng(seed)
    n_hide = min(int(round(ratio * n_features)), n_features - 1)
    keep = np.ones((n_masks, n_features), dtype=bool)
    for m in range(n_masks):
        keep[m, rng.choice(n_features, n_hide, replace=False)] = False
    return keep


def masked_context(base: str, x: np.ndarray, anchors: np.ndarray, level: float, masks: np.ndarray) -> np.ndarray:
    """Feature-masking context (Section 5.3, RBF_mask / KNN_mask): P+(a|x) = mean over the masks m of the
    base context computed on the kept features of m (the hidden coordinates are dropped from x and a)."""
    p = np.zeros((len(x), len(anchors)))
    for keep in masks:
        p += context_matrix(base, x[:, keep], anchors[:, keep], level)
    return p / len(masks)


def label_classes(y: np.ndarray, pretrain: np.ndarray, bins: int) -> np.ndarray:
    """Class index of every row of the targets y (n, c): the argmax of a (centred) one-hot classification
    target; for a regression target (c = 1) its quantile bin among the pretraining rows' targets (`bins`
    bins of equal pretraining mass; ties can leave fewer)."""
    if y.shape[1] > 1:
        return np.argmax(y, axis=1)
    edges = np.quantile(y[pretrain, 0], np.linspace(0.0, 1.0, bins + 1)[1:-1])
    return np.searchsorted(np.unique(edges), y[:, 0], side="right")


def label_context(
    x: np.ndarray, anchors: np.ndarray, anchor_labels: np.ndarray, k: int, n_classes: int | None = None
) -> np.ndarray:
    """P+(y|x) (n x classes) = the share of each class among the k nearest anchors of x (Euclidean)."""
    n_classes = int(anchor_labels.max()) + 1 if n_classes is None else n_classes
    return knn_context(x, anchors, k) @ np.eye(n_classes)[anchor_labels]


def context_matrix(
    kind: str,
    x: np.ndarray,
    anchors: np.ndarray,
    level: float,
    masks: np.ndarray | None = None,
    anchor_labels: np.ndarray | None = None,
) -> np.ndarray:
    """P+(a|x) of a context kind: 'knn', 'rbf', their masked versions 'knn_mask', 'rbf_mask' (needs masks),
    or 'label' (A = Y, k = level nearest anchors; needs the anchors' class indices)."""
    if kind == "knn":
        return knn_context(x, anchors, int(level))
    if kind == "rbf":
        return rbf_context(x, anchors, float(level))
    if kind in ("knn_mask", "rbf_mask"):
        if masks is None:
            raise ValueError(f"context kind {kind!r} needs feature masks (see feature_masks)")
        return masked_context(kind[:3], x, anchors, level, masks)
    if kind == "label":
        if anchor_labels is None:
            raise ValueError("context kind 'label' needs the class indices of the anchors (see label_classes)")
        return label_context(x, anchors, anchor_labels, int(level))
    raise ValueError(f"context kind {kind!r}: expected 'knn', 'rbf', 'knn_mask', 'rbf_mask' or 'label'")


def spectrum(p_plus: np.ndarray) -> dict[str, np.ndarray]:
    """Singular values and functions of the expectation operator of a row-stochastic P+ (n x m; m anchors
    for A = X, m classes for A = Y): min(n, m) of them."""
    n = p_plus.shape[0]
    p_a = p_plus.mean(axis=0)
    keep = p_a > 0  # anchors no input points to carry no mass
    m = np.sqrt(1.0 / n) * p_plus[:, keep] / np.sqrt(p_a[keep])[None, :]
    u, s, vt = np.linalg.svd(m, full_matrices=False)
    nu = np.zeros((p_plus.shape[1], len(s)))
    nu[keep] = vt.T / np.sqrt(p_a[keep])[:, None]
    return {"s": s, "mu": np.sqrt(n) * u, "nu": nu}


def extend(p_plus_new: np.ndarray, spec: dict, d: int) -> np.ndarray:
    """Nystrom extension of mu_1..mu_d to new inputs from their context rows P+(a|x_new)."""
    s, nu = spec["s"][1 : d + 1], spec["nu"][:, 1 : d + 1]
    return (p_plus_new @ nu) / s[None, :]


def tau_metric(s: np.ndarray, beta: float = 1.0, d0: int | None = None) -> tuple[float, int]:
    """(tau, argmin d) of Eq. 4 from singular values s (s[0] = 1 is the constant function, excluded), d
    from 1 to d0; s holds every non-zero singular value (a finite-rank operator: s_i = 0 past its end)."""
    s2 = np.asarray(s, dtype=float)[1:] ** 2  # s_1^2, s_2^2, ...
    d0 = len(s2) if d0 is None else min(d0, len(s2))
    total = s2[:d0].sum()
    s2 = np.r_[s2, 0.0]
    best, best_d = np.inf, 0
    for d in range(1, d0 + 1):
        t = 1.0 / (1.0 - min(s2[d], 1.0 - 1e-12)) + beta * s2[:d].sum() / total
        if t < best:
            best, best_d = t, d
    return float(best), best_d


def ridge_probe_error(f_train, y_train, f_test, y_test, alpha: float) -> float:
    """Test MSE of a ridge regression (with intercept) from features to standardised targets."""
    ft, fs = np.c_[np.ones(len(f_train)), f_train], np.c_[np.ones(len(f_test)), f_test]
    reg = alpha * np.eye(ft.shape[1])
    reg[0, 0] = 0.0
    w = np.linalg.solve(ft.T @ ft + reg, ft.T @ y_train)
    return float(((fs @ w - y_test) ** 2).mean())


def mean_cca(a: np.ndarray, b: np.ndarray, eps: float = 1e-8) -> float:
    """Mean canonical correlation between the column spaces of a and b (centred; n x p, n x q)."""

    def orth(z):
        z = z - z.mean(axis=0)
        u, s, _ = np.linalg.svd(z, full_matrices=False)
        return u[:, s > eps * max(s.max(), eps)]

    qa, qb = orth(a), orth(b)
    corr = np.linalg.svd(qa.T @ qb, compute_uv=False)
    k = min(qa.shape[1], qb.shape[1])
    return float(np.clip(corr[:k], 0, 1).mean()) if k else 0.0
