"""Step 4 of HypotheSAEs: validate hypotheses on held-out data (paper Sec. 4; official evaluation.py).

One joint OLS (Logit when the target is binary, as the official code) of the held-out target on the
binary annotations of all hypotheses plus a constant;
a hypothesis is significant when its coefficient's two-sided p-value is below alpha / H (Bonferroni
over the H hypotheses generated). Recovery of reference hypotheses on synthetic data: a one-to-one
(Hungarian) matching of generated to reference hypotheses, then precision, recall and F1.
"""
from __future__ import annotations

import numpy as np
from scipy import stats
from scipy.optimize import linear_sum_assignment


def ols_pvalues(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Coefficients and two-sided t-test p-values of y ~ 1 + x (constant first), and R^2.

    Columns of x that are constant or duplicate an earlier column (e.g. two features given the same
    hypothesis) cannot be estimated; they get coefficient 0 and p-value 1.
    """
    n, h = x.shape
    keep = _estimable_columns(x)
    design = np.column_stack([np.ones(n)] + [x[:, j].astype(float) for j in keep])
    beta, *_ = np.linalg.lstsq(design, y, rcond=None)
    resid = y - design @ beta
    dof = n - design.shape[1]
    if dof <= 0:
        raise ValueError(f"OLS: {n} held-out texts for {design.shape[1]} parameters; need more texts")
    sigma2 = resid @ resid / dof
    se = np.sqrt(np.diag(sigma2 * np.linalg.inv(design.T @ design)))
    p = 2 * stats.t.sf(np.abs(beta / se), dof)
    coef, pvals = np.zeros(h + 1), np.ones(h + 1)
    coef[0], pvals[0] = beta[0], p[0]
    coef[np.array(keep, dtype=int) + 1], pvals[np.array(keep, dtype=int) + 1] = beta[1:], p[1:]
    r2 = 1 - resid @ resid / ((y - y.mean()) @ (y - y.mean()))
    return coef, pvals, float(r2)


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


def logit_pvalues(x: np.ndarray, y: np.ndarray, max_iter: int = 100, tol: float = 1e-10
                  ) -> tuple[np.ndarray, np.ndarray, float]:
    """Maximum-likelihood logistic regression of binary y on 1 + x (Newton-Raphson), two-sided Wald
    p-values from the inverse Fisher information, McFadden's pseudo-R^2 (as the official code's Logit for
    a binary target). Non-estimable columns get coefficient 0 and p-value 1, as in `ols_pvalues`.
    Under complete separation the likelihood has no maximum: the standard errors blow up and the
    p-values go to 1 (the fit stops after max_iter steps)."""
    n, h = x.shape
    y = np.asarray(y, dtype=float)
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("Logit: the target must be binary 0/1")
    keep = _estimable_columns(x)
    design = np.column_stack([np.ones(n)] + [x[:, j].astype(float) for j in keep])
    beta = np.zeros(design.shape[1])
    for _ in range(max_iter):
        mu = 1.0 / (1.0 + np.exp(-design @ beta))
        info = design.T @ (design * (mu * (1 - mu))[:, None])
        step = np.linalg.lstsq(info, design.T @ (y - mu), rcond=None)[0]
        beta = beta + step
        if np.max(np.abs(step)) < tol:
            break
    mu = np.clip(1.0 / (1.0 + np.exp(-design @ beta)), 1e-12, 1 - 1e-12)
    info = design.T @ (design * (mu * (1 - mu))[:, None])
    se = np.sqrt(np.clip(np.diag(np.linalg.pinv(info)), 0, None))
    z = np.divide(beta, se, out=np.zeros_like(beta), where=se > 0)
    p = np.where(se > 0, 2 * stats.norm.sf(np.abs(z)), 1.0)
    coef, pvals = np.zeros(h + 1), np.ones(h + 1)
    coef[0], pvals[0] = beta[0], p[0]
    coef[np.array(keep, dtype=int) + 1], pvals[np.array(keep, dtype=int) + 1] = beta[1:], p[1:]
    ll = float(np.sum(y * np.log(mu) + (1 - y) * np.log(1 - mu)))
    p0 = np.clip(y.mean(), 1e-12, 1 - 1e-12)
    ll0 = float(n * (p0 * np.log(p0) + (1 - p0) * np.log(1 - p0)))
    return coef, pvals, 1.0 - ll / ll0 if ll0 != 0 else 0.0


def significant_hypotheses(annotations: np.ndarray, y: np.ndarray, alpha: float, n_hypotheses: int,
                           classification: bool = False) -> dict:
    """Joint OLS (Logit for a binary target) on held-out annotations; significant = p < alpha / n_hypotheses
    (Bonferroni). r2: R^2 of the OLS fit, McFadden's pseudo-R^2 of the Logit fit."""
    coef, p, r2 = (logit_pvalues if classification else ols_pvalues)(annotations, y)
    sig = p[1:] < alpha / n_hypotheses
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
