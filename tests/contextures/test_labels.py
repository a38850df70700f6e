"""Contextures: label contexts (A = Y) against brute-force references, tau of finite-rank operators, no
label leakage from the rows being encoded."""

import numpy as np
import pytest

from methods.contextures import spectral as S
from methods.contextures.experiment import evaluate_context, probe_dims


def test_label_context_is_the_class_share_among_the_k_nearest_anchors():
    rng = np.random.default_rng(0)
    anchors, new = rng.normal(size=(25, 3)), rng.normal(size=(6, 3))
    cls = rng.integers(0, 4, 25)
    ref = np.zeros((6, 4))
    for i, row in enumerate(new):  # brute force: sort the distances
        for j in np.argsort(((anchors - row) ** 2).sum(1))[:5]:
            ref[i, cls[j]] += 1 / 5
    p = S.context_matrix("label", new, anchors, 5, anchor_labels=cls)
    assert np.allclose(p, ref) and np.allclose(p.sum(1), 1.0)
    with pytest.raises(ValueError, match="'label' needs the class indices"):
        S.context_matrix("label", new, anchors, 5)


def test_the_labels_themselves_have_every_singular_value_one_and_tau_beta_plus_one():
    """K = 1 on the pretraining set: P+(y|x_i) = 1[y = y_i]; M^T M = D_A^{-1/2} diag(p_A) D_A^{-1/2} = I, so
    s_0 = ... = s_{C-1} = 1 and s_i = 0 beyond; tau = tau_{C-1} = 1/(1 - 0) + beta = beta + 1 (abstain)."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(30, 2))
    cls = np.arange(30) % 3
    spec = S.spectrum(S.context_matrix("label", x, x, 1, anchor_labels=cls))
    assert spec["s"].shape == (3,) and np.allclose(spec["s"], 1.0)
    tau, d = S.tau_metric(spec["s"], beta=0.7, d0=15)
    assert d == 2 and tau == pytest.approx(1.7)
    mu = spec["mu"][:, 1:]  # class indicators, centred, orthonormal
    assert np.allclose(mu.T @ mu / 30, np.eye(2), atol=1e-10)
    assert S.mean_cca(mu, np.eye(3)[cls]) == pytest.approx(1.0)


def test_tau_of_a_finite_rank_spectrum_reaches_d_equal_to_the_rank():
    assert S.tau_metric(np.array([1.0, 0.6]), d0=10) == (pytest.approx(2.0), 1)  # binary labels
    tau, d = S.tau_metric(np.array([1.0, 0.9, 0.5]), d0=10)  # tau_1 = 4/3 + .81/1.06 > tau_2 = 2
    assert (d, tau) == (2, pytest.approx(2.0))
    tau, d = S.tau_metric(np.array([1.0, 0.9, 0.1]), d0=10)  # tau_1 = 1/.99 + .81/.82 < 2
    assert d == 1 and tau == pytest.approx(1 / 0.99 + 0.81 / 0.82)


def test_label_classes_of_classification_and_regression_targets():
    y = np.eye(3)[[0, 2, 1, 2]]
    assert (S.label_classes(y - y.mean(0), np.arange(4), 10) == [0, 2, 1, 2]).all()
    t = np.random.default_rng(2).normal(size=(200, 1))
    pre = np.arange(100)
    c = S.label_classes(t, pre, 4)
    assert (np.bincount(c[pre]) == 25).all()  # equal pretraining mass per bin
    t2 = t.copy()
    t2[100:] = 50.0  # non-pretraining targets set no edge
    assert (S.label_classes(t2, pre, 4)[:100] == c[:100]).all() and (S.label_classes(t2, pre, 4)[100:] == 3).all()


def test_probe_dims():
    assert probe_dims([1, 2, 4, 8], 40) == [1, 2, 4, 8]
    assert probe_dims([1, 2, 4, 8, 16], 10) == [1, 2, 4, 8]  # A = X: the grid below d0
    assert probe_dims([1, 2, 4, 8], 40, rank=2) == [1, 2]  # three classes
    assert probe_dims([1, 2, 4, 8], 40, rank=9) == [1, 2, 4, 8, 9]  # ten classes
    assert probe_dims([1, 2, 4, 8], 5, rank=9) == [1, 2, 4, 5]


def test_a_label_context_never_reads_the_labels_of_the_rows_it_encodes():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(90, 4))
    y = np.eye(2)[(x[:, 0] > 0).astype(int)]
    y = y - y.mean(0)
    parts = {"pretrain": np.arange(50), "downstream": np.arange(50, 70), "test": np.arange(70, 90)}
    labels = S.label_classes(y, parts["pretrain"], 10)
    scrambled = labels.copy()
    scrambled[50:] = 1 - scrambled[50:]
    a = evaluate_context("label", 3, x, y, parts, [1, 2, 4], 1e-3, 1.0, 512, labels=labels)
    b = evaluate_context("label", 3, x, y, parts, [1, 2, 4], 1e-3, 1.0, 512, labels=scrambled)
    assert a == b and a["d_err"] == 1 and a["tau"] == pytest.approx(2.0)
    knn = evaluate_context("knn", 3, x, y, parts, [1, 2, 4], 1e-3, 1.0, 512)
    assert a["err"] < knn["err"]  # the labels' own context predicts them better
