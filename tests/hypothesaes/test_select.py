"""Neuron selection (official select_neurons.py): Lasso alpha search to a target count; alternatives."""

import numpy as np
import pytest

from methods.hypothesaes.select import (
    lasso_alpha_search,
    select_correlation,
    select_features,
    select_lasso,
    select_separation,
    standardise,
)


def _problem(n=400, p=30, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, p))
    beta = np.zeros(p)
    beta[[2, 5, 11, 17, 23]] = [2.0, -1.5, 1.0, -0.8, 0.6]
    return z, z @ beta + rng.normal(scale=0.5, size=n), beta


@pytest.mark.parametrize("target", [1, 3, 5, 8])
def test_alpha_search_hits_the_target_count(target):
    z, y, _ = _problem()
    fit = lasso_alpha_search(standardise(z), y, target)
    assert fit["n_nonzero"] == target == np.count_nonzero(fit["coef"])


def test_lasso_selects_the_planted_predictors_ranked_by_abs_coef():
    z, y, beta = _problem()
    idx, coef = select_lasso(z, y, 5)
    assert set(idx) == {2, 5, 11, 17, 23}
    assert list(idx[:2]) == [2, 5] and np.all(np.diff(np.abs(coef)) <= 0)


def test_l1_logistic_search_hits_the_count():
    z, y, _ = _problem(seed=1)
    idx, _ = select_lasso(z, (y > 0).astype(int), 3, classification=True)
    assert len(idx) == 3 and set(idx) <= {2, 5, 11, 17, 23}


def test_impossible_count_names_the_fix():
    z = np.zeros((50, 4))
    z[:, 0] = np.arange(50)
    with pytest.raises(ValueError, match="n_select"):
        lasso_alpha_search(standardise(z), np.arange(50.0), 3)


def test_correlation_matches_numpy_corrcoef():
    z, y, _ = _problem(seed=2)
    idx, score = select_correlation(z, y, 4)
    ref = np.array([np.corrcoef(z[:, j], y)[0, 1] for j in range(z.shape[1])])
    assert list(idx) == list(np.argsort(-np.abs(ref))[:4])
    assert np.allclose(score, ref[idx])


def test_separation_score_uses_exact_zero_as_not_firing():
    y = np.array([5.0, 4.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    z = np.zeros((10, 2))
    z[:2, 0] = [3.0, 2.0]  # fires on the high-y texts
    z[:, 1] = 1.0  # fires everywhere: no non-firing texts, score 0
    idx, score = select_separation(z, y, 1, top_fraction=0.2)
    assert idx[0] == 0
    assert score[0] == pytest.approx(4.5 - y[2:].mean())


def test_unknown_method_lists_the_available_ones():
    with pytest.raises(ValueError, match="correlation"):
        select_features("ridge", np.zeros((3, 2)), np.zeros(3), 1)
