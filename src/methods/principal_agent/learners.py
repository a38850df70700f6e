"""Adversarial bandit learners, batched over R runs that each have their own (padded) action set.

- `Exp3`: EXP3 over k actions (Lattimore & Szepesvari 2020, Alg. 9 / Thm 11.2: importance-weighted
  reward estimates, eta = sqrt(2 log k / (k T)), regret <= sqrt(2 T k log k)).
- `Exp3Linear`: EXP3 for adversarial linear bandits with exploration along a G-optimal design
  (Lattimore & Szepesvari, Ch. 27, Thm 27.1: eta = sqrt(log k / (3 d T)), gamma = d eta, regret
  <= 2 sqrt(3 d T log k)). This is the learner the paper runs on the features z^pi (Section 3).
- `TsallisInf`: 1/2-Tsallis-INF (Zimmert & Seldin 2021, Alg. 1 with the importance-weighted loss
  estimator, eta_t = 2 / sqrt(t), regret <= 4 sqrt(k T) + 1). The paper's learner on the eps-grid of
  the smooth model (Section 4).

Every learner keeps arrays of shape (R, k_max); actions beyond a run's k_r are padding with
probability zero. Runs are ordered by decreasing horizon, so the m runs still playing at round t are
always the first m rows (`probs(m)`, `update(m, ...)` work on views of those rows).
Rewards given to `update` are the principal's utilities U in [-1, 1].
"""

from __future__ import annotations

import numpy as np

# --- the estimators (tested for unbiasedness in tests/principal_agent/test_learners.py) ------------


def exp3_reward_estimate(probs: np.ndarray, action: np.ndarray, reward01: np.ndarray) -> np.ndarray:
    """EXP3's estimate X_hat_i = 1 - 1[A = i] (1 - X) / P_i of every action's reward in [0, 1]; (m, k)."""
    m = len(action)
    est = np.ones_like(probs)
    est[np.arange(m), action] -= (1.0 - reward01) / probs[np.arange(m), action]
    return est


def linear_reward_estimate(
    features: np.ndarray, probs: np.ndarray, action: np.ndarray, reward: np.ndarray, pad: np.ndarray | None = None
) -> np.ndarray:
    """Y_hat = Q^{-1} a_t X_t with Q = sum_a P(a) a a^T (Lattimore & Szepesvari eq. 27.2); (m, d).

    features (m, k, d), probs (m, k). `pad` (m, d) marks padded coordinates, whose identity rows keep
    Q invertible without touching the real block.
    """
    m = len(action)
    Q = np.matmul(features.transpose(0, 2, 1) * probs[:, None, :], features)  # (m, d, d)
    if pad is not None:
        Q = Q + pad[:, :, None] * np.eye(Q.shape[1])[None]
    rhs = features[np.arange(m), action] * reward[:, None]  # (m, d)
    return np.linalg.solve(Q, rhs[:, :, None])[:, :, 0]


def iw_loss_estimate(weights: np.ndarray, action: np.ndarray, loss: np.ndarray) -> np.ndarray:
    """Tsallis-INF's importance-weighted estimate l_hat_i = 1[A = i] l / w_i; (m, k)."""
    m = len(action)
    est = np.zeros_like(weights)
    est[np.arange(m), action] = loss / weights[np.arange(m), action]
    return est


def g_optimal_design(features: np.ndarray, n_iter: int = 1000, tol: float = 0.01) -> np.ndarray:
    """Kiefer-Wolfowitz / G-optimal design over the rows of `features` (k, d) of full column rank.

    Frank-Wolfe (Fedorov-Wynn) iterations: move mass to the row maximising a^T V(pi)^{-1} a until that
    maximum is within (1 + tol) d of its optimum d (Lattimore & Szepesvari, Thm 21.1 and note 21.2).
    """
    k, d = features.shape
    w = np.full(k, 1.0 / k)
    for _ in range(n_iter):
        V = features.T @ (features * w[:, None])
        g = np.einsum("kd,de,ke->k", features, np.linalg.inv(V), features)
        a = int(g.argmax())
        if g[a] <= d * (1 + tol):
            break
        step = (g[a] / d - 1.0) / (g[a] - 1.0)
        w *= 1.0 - step
        w[a] += step
    return w


def span_coordinates(z: np.ndarray, tol: float = 1e-10) -> np.ndarray:
    """Coordinates of the rows of z (k, K) in an orthonormal basis of their span, (k, r)."""
    u, s, vt = np.linalg.svd(z, full_matrices=False)
    r = int((s > tol * max(1.0, s.max())).sum())
    return z @ vt[:r].T


def _sample(rng: np.random.Generator, probs: np.ndarray) -> np.ndarray:
    """One action per row of probs (m, k) by inverse CDF."""
    cum = np.cumsum(probs, axis=1)
    u = rng.uniform(size=(len(probs), 1)) * cum[:, -1:]
    return np.minimum((cum < u).sum(axis=1), probs.shape[1] - 1)


class Learner:
    """Common batch layout: n_actions (R,), horizons (R,) in decreasing order."""

    def __init__(self, n_actions: np.ndarray, horizons: np.ndarray):
        self.n_actions = np.asarray(n_actions, int)
        self.horizons = np.asarray(horizons, int)
        assert np.all(np.diff(self.horizons) <= 0), "runs must be ordered by decreasing horizon"
        self.k_max = int(self.n_actions.max())
        self.valid = np.arange(self.k_max)[None, :] < self.n_actions[:, None]  # (R, k)

    def sample(self, rng, probs):
        return _sample(rng, probs)


class Exp3(Learner):
    """EXP3 over each run's finite action set (rewards mapped to [0, 1] as (1 + U) / 2)."""

    def __init__(self, n_actions, horizons):
        super().__init__(n_actions, horizons)
        k = np.maximum(self.n_actions, 2)
        self.eta = np.sqrt(2.0 * np.log(k) / (k * self.horizons))
        self.S = np.where(self.valid, 0.0, -np.inf)  # cumulative estimated reward minus t (a common shift)

    def probs(self, m):
        s = self.eta[:m, None] * self.S[:m]
        p = np.exp(s - s.max(axis=1, keepdims=True))
        return p / p.sum(axis=1, keepdims=True)

    def update(self, m, action, reward, probs):
        x01 = (1.0 + reward) / 2.0
        rows = np.arange(m)
        self.S[rows, action] -= (1.0 - x01) / probs[rows, action]


class Exp3Linear(Learner):
    """EXP3 for linear bandits with G-optimal exploration on features (R, k, d) (padding: zero rows)."""

    def __init__(self, features: list[np.ndarray], horizons):
        super().__init__([len(f) for f in features], horizons)
        coords = [span_coordinates(f) for f in features]
        self.rank = np.array([c.shape[1] for c in coords])
        d_max = int(self.rank.max())
        R = len(coords)
        self.X = np.zeros((R, self.k_max, d_max))
        self.design = np.zeros((R, self.k_max))
        for r, c in enumerate(coords):
            self.X[r, : len(c), : c.shape[1]] = c
            self.design[r, : len(c)] = g_optimal_design(c)
        self.pad = (np.arange(d_max)[None, :] >= self.rank[:, None]).astype(float)
        k = np.maximum(self.n_actions, 2)
        self.eta = np.sqrt(np.log(k) / (3.0 * self.rank * self.horizons))
        self.gamma = np.minimum(1.0, self.rank * self.eta)
        self.S = np.where(self.valid, 0.0, -np.inf)

    def probs(self, m):
        s = self.eta[:m, None] * self.S[:m]
        p = np.exp(s - s.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        g = self.gamma[:m, None]
        return g * self.design[:m] + (1.0 - g) * p

    def update(self, m, action, reward, probs):
        y = linear_reward_estimate(self.X[:m], probs, action, reward, self.pad[:m])  # (m, d)
        self.S[:m] += np.matmul(self.X[:m], y[:, :, None])[:, :, 0]


class TsallisInf(Learner):
    """1/2-Tsallis-INF with importance-weighted losses l = (1 - U) / 2 in [0, 1]."""

    newton_steps = 30

    def __init__(self, n_actions, horizons):
        super().__init__(n_actions, horizons)
        self.L = np.where(self.valid, 0.0, np.inf)  # cumulative estimated losses
        self.x = np.full((len(self.n_actions), 1), -np.inf)  # last normaliser, a warm start
        self.t = 0

    def probs(self, m):
        """w_i = 4 (eta_t (L_i - x))^{-2} with x < min L solving sum_i w_i = 1 (Newton's method)."""
        self.t += 1
        eta = 2.0 / np.sqrt(self.t)
        L = self.L[:m]
        c = 4.0 / eta**2
        safe = L.min(axis=1, keepdims=True) - 2.0 / eta  # there the smallest-loss weight is 1, so sum(w) >= 1
        x = np.minimum(self.x[:m], safe)  # warm start: last round's normaliser
        # f(x) = sum(w) - 1 is convex and increasing on x < min L. Newton from a point with f >= 0 decreases
        # monotonically to the root; from a point with f < 0 one step lands right of the root (convexity),
        # clipped to `safe` (also right of the root) so that it stays left of the pole at min L.
        for step in range(self.newton_steps):
            r = 1.0 / (L - x)
            r2 = r * r
            f = c * r2.sum(axis=1, keepdims=True) - 1.0
            if np.all(np.abs(f) < 1e-9):
                break
            with np.errstate(divide="ignore", invalid="ignore"):  # first round: x = -inf, f = -1
                x = x - f / (2.0 * c * (r2 * r).sum(axis=1, keepdims=True))
            if step == 0:
                x = np.minimum(np.where(np.isfinite(x), x, safe), safe)
        self.x[:m] = x
        w = c * r2
        return w / w.sum(axis=1, keepdims=True)

    def update(self, m, action, reward, probs):
        loss = (1.0 - reward) / 2.0
        rows = np.arange(m)
        self.L[rows, action] += loss / probs[rows, action]
