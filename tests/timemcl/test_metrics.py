"""Metrics on hand-computed cases and against independent definitions."""

import numpy as np
import pytest

from methods.timemcl.metrics import (
    crps_empirical,
    crps_weighted_elementwise,
    distortion,
    mixture_rmse,
    total_variation,
    weighted_crps,
    weighted_crps_sum,
    winners,
)


def _crps_by_integral(x, w, y, lo=-20.0, hi=20.0, n=400001):
    """CRPS = integral (F(z) - 1{z >= y})^2 dz, F the step CDF of sum_i w_i delta_{x_i}."""
    z = np.linspace(lo, hi, n)
    F = (np.asarray(w)[None, :] * (z[:, None] >= np.asarray(x)[None, :])).sum(1)
    return np.trapezoid((F - (z >= y)) ** 2, z)


def test_distortion_hand_cases():
    target = np.zeros((1, 2, 1))
    exact = np.zeros((1, 3, 2, 1))
    exact[0, 1] = 5.0
    assert distortion(exact, target) == 0.0  # one exact hypothesis among others
    hyps = np.array([[[[1.0], [3.0]], [[2.0], [2.0]]]])  # RMSEs sqrt(5), 2
    assert distortion(hyps, target) == pytest.approx(2.0)
    two_windows = np.concatenate([hyps, exact[:, :2]], axis=0)  # second window: exact hit
    assert distortion(two_windows, np.zeros((2, 2, 1))) == pytest.approx(1.0)


def test_distortion_official_definition_by_hand():
    """D_2 sums over dims and averages over time inside the root (official `distorsion`), then min over K.

    One window, H = 2 steps, D = 2 dims, target 0. Hypothesis 0: errors (1, 1) at t0 and (1, 1) at t1
    -> per-dim time means (1, 1), summed 2, root sqrt(2) = 1.414 (the mean over dims would give 1).
    Hypothesis 1: errors (0, 2) at t0 and (0, 0) at t1 -> per-dim means (0, 2), sum 2, root sqrt(2) too;
    hypothesis 2: (1, 0), (1, 0) -> (1, 0), root 1 -> the minimum. Second window: the target is 3 and
    the hypotheses sit at 3 + (2, 0), ... -> hand values 2.0 below.
    """
    target = np.zeros((2, 2, 2))
    target[1] = 3.0
    h = np.zeros((2, 3, 2, 2))
    h[0, 0] = [[1, 1], [1, 1]]
    h[0, 1] = [[0, 2], [0, 0]]
    h[0, 2] = [[1, 0], [1, 0]]
    h[1] = 3.0
    h[1, 0] += [[2, 0], [2, 0]]  # per-dim means (4, 0) -> 2
    h[1, 1] += [[2, 2], [2, 2]]  # (4, 4) -> sqrt(8)
    h[1, 2] += [[0, 4], [0, 0]]  # (0, 8) -> sqrt(8)
    assert distortion(h[:1], target[:1]) == pytest.approx(1.0)
    assert distortion(h[1:], target[1:]) == pytest.approx(2.0)
    assert distortion(h, target) == pytest.approx(1.5)
    assert winners(h, target).tolist() == [2, 0]


def test_distortion_matches_loop():
    rng = np.random.default_rng(0)
    hyps, y = rng.normal(size=(4, 3, 5, 2)), rng.normal(size=(4, 5, 2))
    ref = np.mean([min(np.sqrt(((hyps[n, k] - y[n]) ** 2).mean(axis=0).sum()) for k in range(3)) for n in range(4)])
    assert distortion(hyps, y) == pytest.approx(ref)
    assert winners(hyps, y).tolist() == [
        int(np.argmin([((hyps[n, k] - y[n]) ** 2).sum() for k in range(3)])) for n in range(4)
    ]


def test_total_variation_by_hand():
    x = np.array([0.0, 1.0, -1.0, 2.0]).reshape(1, 1, 4, 1)  # |1| + |-2| + |3| = 6
    assert total_variation(x) == pytest.approx(6.0)
    two = np.concatenate([x, np.zeros_like(x)], axis=1)  # a constant hypothesis has TV 0
    assert total_variation(two) == pytest.approx(3.0)


def test_crps_elementwise_against_integral_and_pairs():
    rng = np.random.default_rng(1)
    for _ in range(3):
        x, w, y = rng.normal(size=5), rng.dirichlet(np.ones(5)), rng.normal()
        pairs = (w * np.abs(x - y)).sum() - 0.5 * (w[:, None] * w[None, :] * np.abs(x[:, None] - x[None, :])).sum()
        got = crps_weighted_elementwise(x, w, np.array(y))
        assert got == pytest.approx(pairs, abs=1e-12)
        assert got == pytest.approx(_crps_by_integral(x, w, y), abs=1e-4)
    assert crps_weighted_elementwise(np.array([-1.0, 1.0]), np.array([0.5, 0.5]), np.array(0.0)) == pytest.approx(0.5)


def test_crps_single_member_is_absolute_error():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(6, 1, 4, 3)) + 5, rng.normal(size=(6, 4, 3)) + 5
    w = np.ones((6, 1))
    assert weighted_crps(x, w, y) == pytest.approx(np.abs(x[:, 0] - y).sum() / np.abs(y).sum())
    sx, sy = x[:, 0].sum(-1), y.sum(-1)
    assert weighted_crps_sum(x, w, y) == pytest.approx(np.abs(sx - sy).sum() / np.abs(sy).sum())


def test_crps_sum_loop_and_permutation_invariance():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(3, 4, 2, 5)), rng.normal(size=(3, 2, 5)) + 2
    w = rng.dirichlet(np.ones(4), size=3)
    num = 0.0
    for n in range(3):
        for h in range(2):
            s, t = x[n, :, h].sum(-1), y[n, h].sum()
            pair = (w[n][:, None] * w[n][None] * np.abs(s[:, None] - s[None])).sum()
            num += (w[n] * np.abs(s - t)).sum() - 0.5 * pair
    ref = num / np.abs(y.sum(-1)).sum()
    assert weighted_crps_sum(x, w, y) == pytest.approx(ref)
    perm = [2, 0, 3, 1]
    assert weighted_crps_sum(x[:, perm], w[:, perm], y) == pytest.approx(ref)


def test_crps_empirical_is_uniform_weights():
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=(2, 7, 3, 2)), rng.normal(size=(2, 3, 2))
    assert crps_empirical(x, y) == pytest.approx(weighted_crps(x, np.full((2, 7), 1 / 7), y))


def test_mixture_rmse_hand_case():
    hyps = np.array([[[[0.0]], [[4.0]]]])  # (1, 2, 1, 1)
    w = np.array([[0.25, 0.75]])
    assert mixture_rmse(hyps, w, np.array([[[3.0]]])) == pytest.approx(0.0)
    assert mixture_rmse(hyps, w, np.array([[[1.0]]])) == pytest.approx(2.0)


def test_weights_must_sum_to_one():
    with pytest.raises(AssertionError, match="sum to 1"):
        weighted_crps_sum(np.zeros((1, 2, 1, 1)), np.array([[0.5, 0.6]]), np.ones((1, 1, 1)))


def test_crps_and_crps_sum_against_gluonts_evaluator():
    """Our exact ensemble CRPS vs GluonTS' MultivariateEvaluator (weighted quantile loss at 99 levels, the
    authors' evaluator family) on an equally weighted ensemble: the two estimate the same integral, and the
    99-level quantile sum differs from the exact value by its discretisation only (about 1 % here)."""
    pd = pytest.importorskip("pandas")
    evaluation = pytest.importorskip("gluonts.evaluation")
    from gluonts.model.forecast import SampleForecast

    rng = np.random.default_rng(0)
    N, S, H, D = 30, 400, 6, 3
    samples = rng.normal(size=(N, S, H, D)) * rng.uniform(0.5, 2.0, size=(N, 1, 1, D)) + 5.0
    y = rng.normal(size=(N, H, D)) + 5.0
    start = pd.Period("2020-01-01", freq="D")
    forecasts = [SampleForecast(samples=samples[n], start_date=start) for n in range(N)]
    truth = [pd.DataFrame(y[n], index=pd.period_range(start, periods=H, freq="D")) for n in range(N)]
    ev = evaluation.MultivariateEvaluator(quantiles=[i / 100 for i in range(1, 100)], target_agg_funcs={"sum": np.sum})
    agg, _ = ev(iter(truth), iter(forecasts), num_series=N)
    w = np.full((N, S), 1.0 / S)
    assert weighted_crps(samples, w, y) == pytest.approx(agg["mean_wQuantileLoss"], rel=0.03)
    assert weighted_crps_sum(samples, w, y) == pytest.approx(agg["m_sum_mean_wQuantileLoss"], rel=0.03)
