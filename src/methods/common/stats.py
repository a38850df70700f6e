"""Statistics that claims share: a correlation over conditions with its rank and leave-one-out checks.

A correlation computed over a handful of conditions (datasets, contexts, grid points) can be carried
by one of them. A claim about it therefore reads Pearson and Spearman together with the range each
takes when any one condition is left out, and must hold on all of them.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy import stats


def _corr(kind: str, x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    r = stats.pearsonr(x, y)[0] if kind == "pearson" else stats.spearmanr(x, y)[0]
    return float(r)


def robust_correlation(x: Sequence[float], y: Sequence[float]) -> dict[str, float]:
    """Pearson and Spearman of (x, y) over conditions, and their minimum and maximum when each condition
    in turn is left out: keys `pearson`, `spearman`, `pearson_loo_min`, `pearson_loo_max`,
    `spearman_loo_min`, `spearman_loo_max`. NaN where fewer than 3 points remain or a side is constant."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"robust_correlation: x and y must be 1-D of one length, got {x.shape} and {y.shape}")
    out = {}
    for kind in ("pearson", "spearman"):
        out[kind] = _corr(kind, x, y)
        loo = [_corr(kind, np.delete(x, i), np.delete(y, i)) for i in range(len(x))]
        out[f"{kind}_loo_min"] = float(np.min(loo)) if loo else float("nan")
        out[f"{kind}_loo_max"] = float(np.max(loo)) if loo else float("nan")
    return out


def robust_correlation_metrics(prefix: str, x: Sequence[float], y: Sequence[float]) -> dict[str, float]:
    """`robust_correlation` with every key prefixed (`<prefix>_pearson`, `<prefix>_spearman_loo_min`, ...),
    ready for a paper's claims metrics."""
    return {f"{prefix}_{k}": v for k, v in robust_correlation(x, y).items()}
