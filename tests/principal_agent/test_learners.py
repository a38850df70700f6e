"""Unbiased estimators (exact and Monte Carlo), Tsallis-INF's normalisation, the G-optimal design."""

import numpy as np
import pytest

from methods.principal_agent import learners as Lr


def _monte_carlo(estimator, probs, n, rng):
    """Mean of the estimator over n draws A ~ probs (one row repeated n times)."""
    actions = rng.choice(len(probs), size=n, p=probs)
    return estimator(np.repeat(probs[None], n, axis=0), actions).mean(axis=0)


def test_exp3_reward_estimate_is_unbiased():
    rng = np.random.default_rng(0)
    x = rng.uniform(size=5)
    p = rng.dirichlet(np.ones(5))
    exact = sum(p[a] * Lr.exp3_reward_estimate(p[None], np.array([a]), x[[a]])[0] for a in range(5))
    np.testing.assert_allclose(exact, x)
    mc = _monte_carlo(lambda P, A: Lr.exp3_reward_estimate(P, A, x[A]), p, 200_000, rng)
    np.testing.assert_allclose(mc, x, atol=0.03)


def test_iw_loss_estimate_is_unbiased():
    rng = np.random.default_rng(1)
    loss, w = rng.uniform(size=6), rng.dirichlet(np.ones(6))
    mc = _monte_carlo(lambda P, A: Lr.iw_loss_estimate(P, A, loss[A]), w, 200_000, rng)
    np.testing.assert_allclose(mc, loss, atol=0.03)


def test_linear_reward_estimate_is_unbiased():
    rng = np.random.default_rng(2)
    k, d = 7, 3
    feats = rng.uniform(-1, 1, size=(k, d))
    y = rng.uniform(-1, 1, size=d)
    p = rng.dirichlet(np.ones(k))
    est = lambda P, A: Lr.linear_reward_estimate(np.repeat(feats[None], len(A), 0), P, A, feats[A] @ y)  # noqa: E731
    exact = sum(p[a] * est(p[None], np.array([a]))[0] for a in range(k))
    np.testing.assert_allclose(exact, y, atol=1e-10)
    np.testing.assert_allclose(_monte_carlo(est, p, 200_000, rng), y, atol=0.05)


def test_padding_coordinates_do_not_change_the_estimate():
    rng = np.random.default_rng(3)
    feats = rng.uniform(-1, 1, size=(5, 2))
    padded = np.concatenate([feats, np.zeros((5, 2))], axis=1)
    p = rng.dirichlet(np.ones(5))[None]
    a, x = np.array([3]), np.array([0.4])
    plain = Lr.linear_reward_estimate(feats[None], p, a, x)
    pad = Lr.linear_reward_estimate(padded[None], p, a, x, pad=np.array([[0.0, 0.0, 1.0, 1.0]]))
    np.testing.assert_allclose(pad[:, :2], plain)
    np.testing.assert_allclose(pad[:, 2:], 0.0)


def test_g_optimal_design_reaches_g_close_to_d():
    rng = np.random.default_rng(4)
    feats = rng.normal(size=(40, 4))
    w = Lr.g_optimal_design(feats, tol=0.01)
    V = feats.T @ (feats * w[:, None])
    g = np.einsum("kd,de,ke->k", feats, np.linalg.inv(V), feats)
    assert w.sum() == pytest.approx(1.0) and g.max() <= 4 * 1.01 + 1e-9


def test_tsallis_weights_are_the_ftrl_solution():
    rng = np.random.default_rng(5)
    learner = Lr.TsallisInf(np.array([6, 4]), np.array([100, 100]))
    for _ in range(30):
        P = learner.probs(2)
        a = learner.sample(rng, P)
        learner.update(2, a, rng.uniform(-1, 1, size=2), P)
    P = learner.probs(2)
    eta = 2 / np.sqrt(learner.t)
    for r in range(2):
        L = learner.L[r, : learner.n_actions[r]]
        w = P[r, : learner.n_actions[r]]
        x = L - 2 / (eta * np.sqrt(w))  # w_i = 4 (eta (L_i - x))^-2  <=>  x = L_i - 2 / (eta sqrt(w_i))
        assert np.ptp(x) < 1e-6 and np.all(P[r, learner.n_actions[r] :] == 0)


@pytest.mark.parametrize("cls", ["exp3", "tsallis", "linear"])
def test_learners_concentrate_on_a_clearly_best_action(cls):
    rng = np.random.default_rng(6)
    means = np.array([0.9, 0.2, 0.1, 0.0])
    T = 3000
    if cls == "linear":
        learner = Lr.Exp3Linear([np.eye(4)], np.array([T]))
    else:
        learner = (Lr.Exp3 if cls == "exp3" else Lr.TsallisInf)(np.array([4]), np.array([T]))
    for _ in range(T):
        P = learner.probs(1)
        a = learner.sample(rng, P)
        learner.update(1, a, np.array([means[a[0]]]), P)
    assert learner.probs(1)[0, 0] > 0.8
