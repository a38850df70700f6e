"""Step 2 of HypotheSAEs: select the features that predict the target (paper Sec. 3.2; official
select_neurons.py). Lasso on standardised activations with an alpha search to a target number of
non-zero coefficients; correlation and separation score as alternatives.
"""

from __future__ import annotations

import math
import warnings

import numpy as np


def standardise(z: np.ndarray) -> np.ndarray:
    """Columns to mean 0, sd 1; constant columns become 0 (they can never be selected)."""
    sd = z.std(0)
    return np.where(sd > 0, (z - z.mean(0)) / np.where(sd > 0, sd, 1.0), 0.0)


def lasso_coefficients(z: np.ndarray, y: np.ndarray, alpha: float, classification: bool = False) -> np.ndarray:
    """Lasso (regression) or L1 logistic regression (liblinear, C = 1/alpha) on standardised features."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import Lasso, LogisticRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if classification:
            # random_state fixed: liblinear shuffles with it (the official code leaves it unset, so its fits
            # vary with numpy's global state)
            model = LogisticRegression(l1_ratio=1.0, solver="liblinear", C=1.0 / alpha, max_iter=1000, random_state=0)
            model.fit(z, y)
            return model.coef_.ravel()
        return Lasso(alpha=alpha, max_iter=1000).fit(z, y).coef_  # official max_iter


def lasso_alpha_search(
    z: np.ndarray,
    y: np.ndarray,
    n_select: int,
    classification: bool = False,
    alpha_range: tuple[float, float] = (1e-6, 1e4),
    max_iter: int = 20,
) -> dict:
    """Geometric bisection on alpha until exactly `n_select` coefficients are non-zero (at most max_iter fits).

    Larger alpha -> fewer non-zeros. If no alpha hits the count, the fit with the fewest non-zeros
    above n_select is kept (ties broken by |coef| in `select_lasso`).
    """
    lo, hi = alpha_range
    best = None
    for _ in range(max_iter):
        alpha = math.sqrt(lo * hi)
        coef = lasso_coefficients(z, y, alpha, classification)
        n = int(np.count_nonzero(coef))
        if n >= n_select and (best is None or n < best["n_nonzero"]):
            best = {"alpha": alpha, "coef": coef, "n_nonzero": n}
        if n == n_select:
            break
        if n > n_select:
            lo = alpha
        else:
            hi = alpha
    if best is None:
        raise ValueError(
            f"Lasso alpha search: no alpha in {alpha_range} keeps {n_select} non-zero coefficients "
            f"(only {z.shape[1]} features, {int(np.count_nonzero(z.std(0)))} non-constant); "
            "lower n_select or use more features"
        )
    return best


def select_lasso(
    z: np.ndarray, y: np.ndarray, n_select: int, classification: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the selected features (ranked by |coef|) and their coefficients."""
    fit = lasso_alpha_search(standardise(z), y, n_select, classification)
    order = np.argsort(-np.abs(fit["coef"]), kind="stable")[:n_select]
    return order, fit["coef"][order]


def select_correlation(z: np.ndarray, y: np.ndarray, n_select: int, **_) -> tuple[np.ndarray, np.ndarray]:
    """The n_select features with the largest |Pearson correlation| with y."""
    zs = standardise(z)
    ys = (y - y.mean()) / (y.std() or 1.0)
    corr = zs.T @ ys / len(y)
    order = np.argsort(-np.abs(corr), kind="stable")[:n_select]
    return order, corr[order]


def select_separation(
    z: np.ndarray, y: np.ndarray, n_select: int, top_fraction: float = 0.1, **_
) -> tuple[np.ndarray, np.ndarray]:
    """Separation score: mean target over the feature's top-activating texts minus over its non-firing ones
    (activation exactly 0; the official helper's `>= 0` test would count every text as firing)."""
    scores = np.zeros(z.shape[1])
    n_top = max(1, int(round(top_fraction * len(y))))
    for j in range(z.shape[1]):
        col = z[:, j]
        off = col == 0
        if off.sum() == 0 or (col > 0).sum() == 0:
            continue
        top = np.argsort(-col, kind="stable")[:n_top]
        scores[j] = y[top].mean() - y[off].mean()
    order = np.argsort(-np.abs(scores), kind="stable")[:n_select]
    return order, scores[order]


SELECTORS = {"lasso": select_lasso, "correlation": select_correlation, "separation": select_separation}


def select_features(method: str, z: np.ndarray, y: np.ndarray, n_select: int, classification: bool = False):
    if method not in SELECTORS:
        raise ValueError(f"selection method {method!r}: unknown; available {sorted(SELECTORS)}")
    return SELECTORS[method](z, y, n_select, classification=classification)
