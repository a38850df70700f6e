"""validate.py against statsmodels (OLS, Logit, multipletests), the library the official evaluation.py fits
with: on fixed seeded annotations, with a duplicated and a constant column that the joint fit cannot
estimate (they get coefficient 0 and p-value 1; statsmodels is fitted on the estimable columns only)."""

import numpy as np
import pytest

sm = pytest.importorskip("statsmodels.api")
from statsmodels.stats.multitest import multipletests  # noqa: E402

from methods.hypothesaes.validate import logit_pvalues, ols_pvalues, significant_hypotheses  # noqa: E402


def _case(seed=11, n=260):
    rng = np.random.default_rng(seed)
    x = (rng.random((n, 4)) < 0.4).astype(float)
    y = x @ np.array([0.7, 0.0, -0.5, 0.25]) + rng.normal(size=n)
    y_bin = (x @ np.array([1.4, 0.0, -1.1, 0.4]) + rng.logistic(size=n) > 0.2).astype(float)
    ann = np.column_stack([x, x[:, 1], np.zeros(n)])  # column 4 duplicates 1; column 5 is constant
    return x, ann, y, y_bin


def test_ols_equals_statsmodels_ols():
    x, ann, y, _ = _case()
    coef, p, r2 = ols_pvalues(ann, y)
    fit = sm.OLS(y, sm.add_constant(x)).fit()
    assert coef[:5] == pytest.approx(fit.params, rel=1e-9, abs=1e-12)
    assert p[:5] == pytest.approx(fit.pvalues, rel=1e-8)
    assert r2 == pytest.approx(fit.rsquared, rel=1e-10)
    assert coef[5:].tolist() == [0.0, 0.0] and p[5:].tolist() == [1.0, 1.0]


def test_logit_equals_statsmodels_logit():
    x, ann, _, y_bin = _case()
    coef, p, r2 = logit_pvalues(ann, y_bin)
    fit = sm.Logit(y_bin, sm.add_constant(x)).fit(disp=0)
    assert coef[:5] == pytest.approx(fit.params, rel=1e-6)
    assert p[:5] == pytest.approx(fit.pvalues, rel=1e-6)
    assert r2 == pytest.approx(fit.prsquared, rel=1e-8)
    assert coef[5:].tolist() == [0.0, 0.0] and p[5:].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("classification", [False, True])
def test_bonferroni_equals_multipletests(classification):
    x, _, y, y_bin = _case(seed=5, n=400)
    target = y_bin if classification else y
    res = significant_hypotheses(x, target, alpha=0.1, n_hypotheses=x.shape[1], classification=classification)
    reject, p_corrected, _, threshold = multipletests(res["pvalue"], alpha=0.1, method="bonferroni")
    assert threshold == pytest.approx(0.1 / x.shape[1])
    assert res["significant"].tolist() == reject.tolist()
    assert 0 < res["n_significant"] < x.shape[1]  # the case separates significant from not


def test_logit_under_complete_separation_reports_no_significance():
    """A hypothesis that predicts the binary target perfectly has no finite MLE: the p-values go to 1."""
    x, _, _, _ = _case(seed=3, n=120)
    coef, p, _ = logit_pvalues(x, x[:, 0].copy())
    assert coef[1] > 5 and p[1] > 0.9


def test_logit_falls_back_to_ols_when_the_fit_fails(monkeypatch):
    """The official compute_ols_metrics refits by OLS when the Logit fit raises."""
    x, _, _, y_bin = _case()

    def fail(self, *args, **kwargs):
        raise np.linalg.LinAlgError("Singular matrix")

    monkeypatch.setattr(sm.Logit, "fit", fail)
    coef, p, r2 = logit_pvalues(x, y_bin)
    ref = ols_pvalues(x, y_bin)
    assert coef.tolist() == ref[0].tolist() and p.tolist() == ref[1].tolist() and r2 == ref[2]
