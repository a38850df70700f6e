"""Step 4 of HypotheSAEs: validate hypotheses on held-out data (paper Sec. 4; official evaluation.py).

One joint OLS (Logit when the target is binary, as the official code) of the held-out target on the
binary annotations of all hypotheses plus a constant, fitted by statsmodels as there; a hypothesis is
significant when its coefficient's two-sided p-value is below alpha / H (Bonferroni over the H
hypotheses generated, statsmodels' multipletests). Recovery of reference hypotheses on synthetic data:
a one-to-one (Hungarian) matching of generated to reference hypotheses, then precision, recall and F1.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.optimize import linear_sum_assignment

from methods.common.io import log


def _estimable_columns(x: np.ndarray) -> list[int]:
    """Columns that are not constant and not a linear combination of the constant and earlier columns."""
    n, keep = len(x), []
    for j in range(x.shape[1]):
        col = x[:, j].astype(float)
        if col.std() == 0:
            continue
        trial = np.column_stack([np.ones(n)] + [x[:, i] for i in keep] + [col])
        if np.linalg.matrix_rank(trial) == trial.shape[1]:
            keep.append(j)
    return keep


def _fit_columns(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The estimable columns of x (see `_estimable_columns`) and the design 1 + x[:, keep] (constant first)."""
    keep = np.array(_estimable_columns(x), dtype=int)
    return keep, np.column_stack([np.ones(len(x))] + [x[:, j].astype(float) for j in keep])


def _scatter(h: int, keep: np.ndarray, params: np.ndarray, pvalues: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Coefficients and p-values of the constant and all h columns: non-estimable columns get 0 and 1."""
    coef, pvals = np.zeros(h + 1), np.ones(h + 1)
    coef[0], pvals[0] = params[0], pvalues[0]
    coef[keep + 1], pvals[keep + 1] = params[1:], pvalues[1:]
    return coef, pvals


def ols_pvalues(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Coefficients and two-sided t-test p-values of y ~ 1 + x (constant first), and R^2: statsmodels `OLS`,
    as the official compute_ols_metrics.

    Columns of x that are constant or duplicate an earlier column (e.g. two features given the same
    hypothesis) cannot be estimated; they get coefficient 0 and p-value 1 (statsmodels' pseudo-inverse would
    split a duplicate's effect between the copies and give a constant column a NaN p-value).
    """
    import statsmodels.api as sm

    keep, design = _fit_columns(x)
    if len(y) <= design.shape[1]:
        raise ValueError(f"OLS: {len(y)} held-out texts for {design.shape[1]} parameters; need more texts")
    fit = sm.OLS(np.asarray(y, dtype=float), design).fit()
    coef, pvals = _scatter(x.shape[1], keep, fit.params, fit.pvalues)
    return coef, pvals, float(fit.rsquared)


def logit_pvalues(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Maximum-likelihood logistic regression of binary y on 1 + x, two-sided Wald p-values and McFadden's
    pseudo-R^2: statsmodels `Logit` (Newton, its defaults), as the official code for a binary target.
    Non-estimable columns get coefficient 0 and p-value 1, as in `ols_pvalues`. Under complete separation
    the likelihood has no maximum: statsmodels warns, the standard errors blow up and the p-values go to 1.
    When the fit itself fails (a singular Hessian), the official code falls back to OLS; so does this."""
    import statsmodels.api as sm

    y = np.asarray(y, dtype=float)
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("Logit: the target must be binary 0/1")
    keep, design = _fit_columns(x)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Perfect separation")
            warnings.filterwarnings("ignore", message="Maximum Likelihood optimization failed")
            fit = sm.Logit(y, design).fit(disp=0)
    except np.linalg.LinAlgError as e:
        log(f"Logit failed ({e}); falling back to OLS, as the official compute_ols_metrics")
        return ols_pvalues(x, y)
    coef, pvals = _scatter(x.shape[1], keep, fit.params, fit.pvalues)
    return coef, pvals, float(fit.prsquared)


def significant_hypotheses(
    annotations: np.ndarray, y: np.ndarray, alpha: float, n_hypotheses: int, classification: bool = False
) -> dict:
    """Joint OLS (Logit for a binary target) on held-out annotations; Bonferroni over `n_hypotheses`
    (statsmodels `multipletests` gives the threshold alpha / n_hypotheses); significant = p below it,
    strictly, as the official score_hypotheses (multipletests' own `reject` is p <= threshold).
    r2: R^2 of the OLS fit, McFadden's pseudo-R^2 of the Logit fit."""
    from statsmodels.stats.multitest import multipletests

    coef, p, r2 = (logit_pvalues if classification else ols_pvalues)(annotations, y)
    threshold = multipletests(np.ones(n_hypotheses), alpha, method="bonferroni")[3]
    sig = p[1:] < threshold
    return {"coef": coef[1:], "pvalue": p[1:], "significant": sig, "n_significant": int(sig.sum()), "r2": r2}


def recovery_f1(generated: list[str], reference: list[str], similarity=None) -> dict:
    """Precision, recall and F1 of a one-to-one matching of generated to reference hypotheses.

    `similarity(g, r)` in [0, 1] (default: exact match); matched pairs contribute their similarity,
    so precision = sum / len(generated) and recall = sum / len(reference).
    """
    if not generated or not reference:
        return {"precision": 0.0, "recall": 0.0, "f1": 0.0, "matches": []}
    sim = similarity or (lambda g, r: float(g == r))
    s = np.array([[sim(g, r) for r in reference] for g in generated])
    rows, cols = linear_sum_assignment(-s)
    total = float(s[rows, cols].sum())
    precision, recall = total / len(generated), total / len(reference)
    f1 = 0.0 if total == 0 else 2 * precision * recall / (precision + recall)
    matches = [(generated[r], reference[c]) for r, c in zip(rows, cols) if s[r, c] > 0]
    return {"precision": precision, "recall": recall, "f1": f1, "matches": matches}
