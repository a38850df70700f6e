"""Correlation over conditions with its rank and leave-one-out range, against direct computations."""

import math

import numpy as np
import pytest

from methods.common.stats import robust_correlation, robust_correlation_metrics


def test_values_equal_numpy_pearson_and_a_rank_pearson():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=7), rng.normal(size=7)
    r = robust_correlation(x, y)
    assert r["pearson"] == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-12)
    rank = lambda v: np.argsort(np.argsort(v))  # noqa: E731  (no ties in continuous draws)
    assert r["spearman"] == pytest.approx(np.corrcoef(rank(x), rank(y))[0, 1], abs=1e-12)
    loo = [np.corrcoef(np.delete(x, i), np.delete(y, i))[0, 1] for i in range(7)]
    assert r["pearson_loo_min"] == pytest.approx(min(loo)) and r["pearson_loo_max"] == pytest.approx(max(loo))


def test_one_point_carrying_a_correlation_shows_in_the_leave_one_out_minimum():
    """Five unrelated points and one outlier: Pearson is high, but it collapses without the outlier
    and the rank correlation does not follow."""
    x = [0.0, 1.0, 2.0, 3.0, 4.0, 20.0]
    y = [1.0, 0.0, 1.0, 0.0, 0.5, 10.0]
    r = robust_correlation(x, y)
    assert r["pearson"] > 0.9
    assert r["pearson_loo_min"] < 0.0
    assert r["spearman"] < 0.5


def test_degenerate_inputs_give_nan_and_bad_shapes_are_named():
    assert math.isnan(robust_correlation([1, 2], [3, 4])["pearson"])
    assert math.isnan(robust_correlation([1, 1, 1, 1], [1, 2, 3, 4])["spearman"])
    with pytest.raises(ValueError, match="one length"):
        robust_correlation([1, 2, 3], [1, 2])


def test_prefixed_keys():
    m = robust_correlation_metrics("ctx", [1, 2, 3, 4], [1, 3, 2, 4])
    assert set(m) == {
        f"ctx_{k}"
        for k in ("pearson", "spearman", "pearson_loo_min", "pearson_loo_max", "spearman_loo_min", "spearman_loo_max")
    }
