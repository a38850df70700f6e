"""Interpretation protocol (annotation F1, activation bins, offline substitute) and validation (joint
OLS with Bonferroni, recovery F1 by one-to-one matching) against hand-made cases and independent fits."""

import numpy as np
import pytest
from scipy import stats

from methods.hypothesaes.interpret import (
    InterpretConfig,
    TermInterpreter,
    activation_bins,
    annotation_f1,
    interpret_feature,
)
from methods.hypothesaes.validate import ols_pvalues, recovery_f1, significant_hypotheses


@pytest.mark.parametrize(
    "labels, ann, f1",
    [
        ([1, 1, 0, 0], [1, 1, 0, 0], 1.0),
        ([1, 1, 0, 0], [1, 0, 0, 0], 2 / 3),  # tp 1, fn 1: 2/(2+1)
        ([1, 1, 0, 0], [1, 1, 1, 1], 2 / 3),  # tp 2, fp 2: 4/6
        ([1, 0, 0, 0], [0, 1, 1, 1], 0.0),
        ([0, 0], [0, 0], 0.0),
    ],
)
def test_annotation_f1_hand_cases(labels, ann, f1):
    assert annotation_f1(np.array(labels), np.array(ann)) == pytest.approx(f1)


def test_activation_bins_top_decile_of_positives_and_zeros():
    a = np.r_[np.zeros(50), np.arange(1, 51, dtype=float)]
    high, low = activation_bins(a, 0.0, 0.9)
    assert set(low) == set(range(50))
    assert set(a[high]) == {46.0, 47.0, 48.0, 49.0, 50.0}


def test_substitute_interpreter_recovers_the_planted_term():
    rng = np.random.default_rng(0)
    n = 400
    presence = rng.random((n, 5)) < 0.3
    act = np.where(presence[:, 3], 1.0 + rng.random(n), 0.0)  # the feature fires exactly on term 3
    interp = TermInterpreter([f"t{j}" for j in range(5)], presence)
    idx = np.arange(n)
    h = interpret_feature((idx[:200], act[:200]), (idx[200:], act[200:]), 0.0, interp, InterpretConfig(), rng)
    assert h["hypothesis"] == "t3"
    # the score is the annotation F1 of the high bin vs non-activating texts: all high texts carry t3,
    # and no non-activating text does
    assert h["f1"] == pytest.approx(1.0)


def test_ols_matches_the_single_regressor_t_test_and_lstsq():
    rng = np.random.default_rng(1)
    x = (rng.random(200) < 0.4).astype(float)
    y = 0.3 * x + rng.normal(size=200)
    coef, p, r2 = ols_pvalues(x[:, None], y)
    slope, intercept, r, p_ref, _ = stats.linregress(x, y)
    assert coef[1] == pytest.approx(slope) and coef[0] == pytest.approx(intercept)
    assert p[1] == pytest.approx(p_ref, rel=1e-8)
    assert r2 == pytest.approx(r**2)


def test_joint_ols_coefficients_equal_least_squares_and_duplicates_are_not_significant():
    rng = np.random.default_rng(2)
    x = (rng.random((300, 3)) < 0.5).astype(float)
    y = x @ np.array([1.0, 0.0, -1.0]) + rng.normal(scale=0.5, size=300)
    ann = np.column_stack([x, x[:, 0], np.ones(300)])  # a duplicate and a constant column
    res = significant_hypotheses(ann, y, alpha=0.1, n_hypotheses=5)
    ref, *_ = np.linalg.lstsq(np.column_stack([np.ones(300), x]), y, rcond=None)
    assert np.allclose(res["coef"][:3], ref[1:])
    assert res["pvalue"][3] == 1.0 and res["pvalue"][4] == 1.0
    assert list(res["significant"]) == [True, False, True, False, False]


def test_bonferroni_divides_alpha_by_the_number_of_hypotheses():
    rng = np.random.default_rng(3)
    x = (rng.random((120, 1)) < 0.5).astype(float)
    y = 0.8 * x[:, 0] + rng.normal(size=120)
    p = ols_pvalues(x, y)[1][1]
    assert p < 0.05  # n_max >= 2
    n_max = int(0.1 / p)  # the most hypotheses p survives
    assert significant_hypotheses(x, y, alpha=0.1, n_hypotheses=n_max)["n_significant"] == 1
    assert significant_hypotheses(x, y, alpha=0.1, n_hypotheses=n_max + 1)["n_significant"] == 0


def test_recovery_f1_one_to_one_matching():
    ref = ["a", "b", "c", "d"]
    assert recovery_f1(["a", "b", "c", "d"], ref)["f1"] == 1.0
    r = recovery_f1(["a", "a", "b", "x", "y", "z", "w", "v"], ref)  # a duplicate matches only once
    assert r["precision"] == pytest.approx(2 / 8) and r["recall"] == pytest.approx(2 / 4)
    assert r["f1"] == pytest.approx(2 * 0.25 * 0.5 / 0.75)
    half = recovery_f1(["p"], ["q"], similarity=lambda g, r: 0.5)
    assert half["f1"] == pytest.approx(0.5)
    assert recovery_f1([], ref)["f1"] == 0.0


def test_logit_matches_an_unpenalised_fit_and_the_numerical_hessian():
    from sklearn.linear_model import LogisticRegression

    from methods.hypothesaes.validate import logit_pvalues

    rng = np.random.default_rng(0)
    x = (rng.random((600, 3)) < 0.4).astype(float)
    y = (rng.random(600) < 1 / (1 + np.exp(-(-0.5 + 1.2 * x[:, 0] - 0.8 * x[:, 1])))).astype(float)
    coef, p, r2 = logit_pvalues(np.column_stack([x, x[:, 0]]), y)  # last column duplicates the first
    ref = LogisticRegression(C=1e12, max_iter=10000, tol=1e-12).fit(x, y)
    assert np.allclose(coef[1:4], ref.coef_.ravel(), atol=1e-4) and abs(coef[0] - ref.intercept_[0]) < 1e-4
    assert coef[4] == 0 and p[4] == 1  # not estimable
    # Wald standard errors = sqrt(diag of the inverse Hessian of the negative log-likelihood), by finite differences
    design = np.column_stack([np.ones(600), x])

    def nll(b):
        eta = design @ b
        return np.sum(np.logaddexp(0, eta) - y * eta)

    b0, eps = coef[:4], 1e-4
    hess = np.array(
        [
            [
                (
                    nll(b0 + eps * (np.eye(4)[i] + np.eye(4)[j]))
                    - nll(b0 + eps * (np.eye(4)[i] - np.eye(4)[j]))
                    - nll(b0 - eps * (np.eye(4)[i] - np.eye(4)[j]))
                    + nll(b0 - eps * (np.eye(4)[i] + np.eye(4)[j]))
                )
                / (4 * eps**2)
                for j in range(4)
            ]
            for i in range(4)
        ]
    )
    se = np.sqrt(np.diag(np.linalg.inv(hess)))
    assert np.allclose(p[:4], 2 * stats.norm.sf(np.abs(b0 / se)), rtol=1e-3, atol=1e-8)
    assert p[1] < 1e-4 and p[2] < 1e-2 and p[3] > 0.01  # planted, planted, null
    assert 0 < r2 < 1
    with pytest.raises(ValueError, match="binary"):
        logit_pvalues(x, y + 0.5)


def test_a_dense_feature_is_read_from_its_bottom_end_when_the_concept_sits_there():
    """A principal component's sign is arbitrary: a concept at the low end of a dense feature is found
    with dense_sides 'both' and missed when only the top end is read."""
    from methods.hypothesaes.interpret import interpret_dense_feature

    rng = np.random.default_rng(0)
    n = 600
    presence = rng.random((n, 6)) < 0.15
    act = rng.normal(size=n) - 3.0 * presence[:, 2]  # term 2 pushes the feature down
    interp = TermInterpreter([f"t{j}" for j in range(6)], presence)
    idx = np.arange(n)
    args = ((idx[:300], act[:300]), (idx[300:], act[300:]), float(np.median(act[:300])), interp)
    both = interpret_dense_feature(*args, InterpretConfig(), np.random.default_rng(1))
    top = interpret_dense_feature(*args, InterpretConfig(dense_sides="positive"), np.random.default_rng(1))
    assert both["hypothesis"] == "t2" and both["side"] == -1 and both["f1"] > 0.8
    assert top["hypothesis"] != "t2" and top["side"] == 1
    with pytest.raises(ValueError, match="dense_sides"):
        InterpretConfig(dense_sides="negative")


def test_validation_counts_distinct_hypotheses_as_the_official_score_hypotheses():
    """Two features given the same hypothesis are one hypothesis: one column in the joint fit and
    Bonferroni over the distinct ones (the official code keys the annotations by hypothesis text)."""
    from methods.hypothesaes.experiment import validate

    rng = np.random.default_rng(4)
    presence = rng.random((300, 3)) < 0.4
    y = 0.8 * presence[:, 0] - 0.8 * presence[:, 1] + rng.normal(size=300)
    interp = TermInterpreter(["a", "b", "c"], presence)
    hyps = [{"hypothesis": h} for h in ("a", "b", "a", "a")]
    res = validate(hyps, y, np.arange(300), interp, alpha=0.1)
    assert res["n_distinct"] == 2 and res["bonferroni_threshold"] == pytest.approx(0.05)
    assert res["n_significant"] == 2
    assert hyps[0]["test_pvalue"] == hyps[2]["test_pvalue"] == hyps[3]["test_pvalue"] and hyps[0]["significant"]
