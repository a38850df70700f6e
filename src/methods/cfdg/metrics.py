"""Distances between generated and real transitions, and normalised returns."""

from __future__ import annotations

import numpy as np
from scipy import stats


def rbf_mmd2(x: np.ndarray, y: np.ndarray, bandwidth: float) -> float:
    """Unbiased squared MMD with k(a, b) = exp(-||a - b||^2 / (2 h^2)) (Gretton et al. 2012, eq. 3)."""

    def k(a, b):
        d2 = (a**2).sum(1)[:, None] + (b**2).sum(1)[None, :] - 2 * a @ b.T
        return np.exp(-np.maximum(d2, 0.0) / (2 * bandwidth**2))

    m, n = len(x), len(y)
    kxx, kyy, kxy = k(x, x), k(y, y), k(x, y)
    return float(
        (kxx.sum() - np.trace(kxx)) / (m * (m - 1)) + (kyy.sum() - np.trace(kyy)) / (n * (n - 1)) - 2 * kxy.mean()
    )


def median_bandwidth(x: np.ndarray, max_points: int = 500) -> float:
    """Median heuristic: the median pairwise distance within (a subset of) x."""
    x = x[:max_points]
    d2 = (x**2).sum(1)[:, None] + (x**2).sum(1)[None, :] - 2 * x @ x.T
    iu = np.triu_indices(len(x), 1)
    return float(np.sqrt(np.median(np.maximum(d2[iu], 0.0))))


def c2st_auc(x: np.ndarray, y: np.ndarray, seed: int, k: int = 10) -> float:
    """Classifier two-sample test: 2-fold cross-validated ROC AUC of a k-NN classifier separating x from y
    (0.5 = indistinguishable, 1 = fully separable)."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold
    from sklearn.neighbors import KNeighborsClassifier

    data = np.concatenate([x, y])
    lab = np.r_[np.zeros(len(x)), np.ones(len(y))]
    scores = np.zeros(len(data))
    for tr, te in StratifiedKFold(2, shuffle=True, random_state=seed).split(data, lab):
        clf = KNeighborsClassifier(k).fit(data[tr], lab[tr])
        scores[te] = clf.predict_proba(data[te])[:, 1]
    return float(roc_auc_score(lab, scores))


def dynamics_error(trans: np.ndarray, obs_dim: int, act_dim: int, predict) -> tuple[float, float]:
    """Mean squared error of generated s' and mean absolute error of generated r against the simulator run from
    the generated (s, a): `predict(obs, act) -> (next_obs, reward)`. NaN for both where the simulator cannot be
    set to an observed state (predict None: Bullet tasks, whose observation leaves out part of the state)."""
    if predict is None:
        return float("nan"), float("nan")
    s, a = trans[:, :obs_dim], trans[:, obs_dim : obs_dim + act_dim]
    r, s2 = trans[:, obs_dim + act_dim], trans[:, obs_dim + act_dim + 1 : 2 * obs_dim + act_dim + 1]
    s2_true, r_true = predict(s, a)
    return float(((s2 - s2_true) ** 2).sum(1).mean()), float(np.abs(r - r_true).mean())


def normalised_score(ret, random_return: float, expert_return: float):
    """D4RL normalised score: 100 (R - R_random) / (R_expert - R_random)."""
    return 100.0 * (np.asarray(ret) - random_return) / (expert_return - random_return)


def paired_t_interval(a, b, level: float = 0.95) -> tuple[float, float, float]:
    """Mean of the per-seed paired differences a - b and its two-sided t confidence interval
    (scipy.stats.ttest_rel(a, b).confidence_interval); one seed gives no interval (NaN)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    mean = float((a - b).mean())
    if len(a) < 2:
        return mean, float("nan"), float("nan")
    ci = stats.ttest_rel(a, b).confidence_interval(level)
    return mean, float(ci.low), float(ci.high)
