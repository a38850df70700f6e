"""The controlled two-modality generator of Tjandrasuwita et al. (ICML 2025, Section 3 / official
`synthetic/generate_prob_*.py`), rewritten here from its description (no code copied).

x_c in {0,1}^S shared, x_u1, x_u2 in {0,1}^K unique, all bits uniform; x1 = [x_c, x_u1],
x2 = [x_c, x_u2]. The label reads F features: r redundant bits of x_c, u1 = (F - r) // 2 bits of
x_u1 and u2 = F - r - u1 bits of x_u2 (the uniqueness is U = F - r). Logits = feats @ W with
W ~ U(0, 1) rows L2-normalised, p(y | x) = softmax(logits / T), then p(y | x) is rescaled by a
per-class factor (iterative proportional fitting) until the class prior p(y) is uniform within
`prior_tol` (official 0.01; the plain tempered softmax is far from uniform, p(y) about [0.085, 0.152,
0.566, 0.197] with I(X1,X2;Y) = 0.9375 nats, and the rescaled official law has 1.1588; 1e-10 makes p(y)
uniform to machine precision).
Heterogeneity: x2 <- phi_D(x2), phi_D = Linear(d, d) followed by D x [Tanh, Linear(d, d)] at random
init, applied to the raw {0, 1} vector before z-scoring; x1 is left untouched.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class GeneratorSpec:
    """Sizes and seeds of the generator (defaults: the official template rus_prob_template.yaml)."""

    shared_dim: int = 8  # S: bits of x_c
    unique_dim: int = 4  # K: bits of x_u1 and of x_u2
    n_label_features: int = 8  # F: bits the label reads
    n_classes: int = 4
    temperature: float = 0.05
    features_seed: int = 1  # which bits the label reads
    weights_seed: int = 2  # W
    prior_tol: float = 0.01  # p(y|x) rescaled until max |p(y) - 1/C| <= prior_tol (official 0.01)
    prior_max_iter: int = 1000


def all_bit_vectors(n_bits: int) -> np.ndarray:
    """Every {0,1}^n vector, row i = binary digits of i, most significant first (itertools.product order)."""
    idx = np.arange(2**n_bits)
    return ((idx[:, None] >> np.arange(n_bits - 1, -1, -1)) & 1).astype(np.float64)


def split_label_features(uniqueness: int, spec: GeneratorSpec) -> tuple[int, int, int]:
    """(r, u1, u2): redundant bits from x_c, unique bits from x_u1 and x_u2 for uniqueness U = F - r."""
    F = spec.n_label_features
    if not 0 <= uniqueness <= F:
        raise ValueError(f"uniqueness must lie in [0, {F}] (n_label_features), got {uniqueness}")
    r = F - uniqueness
    u1 = uniqueness // 2
    u2 = uniqueness - u1
    if r > spec.shared_dim or max(u1, u2) > spec.unique_dim:
        raise ValueError(
            f"uniqueness {uniqueness}: needs r={r} <= shared_dim={spec.shared_dim} and "
            f"u1={u1}, u2={u2} <= unique_dim={spec.unique_dim}"
        )
    return r, u1, u2


def feature_subsets(uniqueness: int, spec: GeneratorSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The bits the label reads: random subsets of x_c, x_u1, x_u2 drawn in sequence from features_seed."""
    r, u1, u2 = split_label_features(uniqueness, spec)
    rs = np.random.RandomState(spec.features_seed)
    red = rs.choice(np.arange(spec.shared_dim), size=r, replace=False)
    uni1 = rs.choice(np.arange(spec.unique_dim), size=u1, replace=False)
    uni2 = rs.choice(np.arange(spec.unique_dim), size=u2, replace=False)
    return red, uni1, uni2


def label_weights(spec: GeneratorSpec) -> np.ndarray:
    """W (F, C): entries U(0, 1), each row scaled to unit L2 norm (balanced feature contributions)."""
    w = np.random.RandomState(spec.weights_seed).uniform(0.0, 1.0, size=(spec.n_label_features, spec.n_classes))
    return w / np.linalg.norm(w, axis=1, keepdims=True)


def softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    z = z - z.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def rescale_to_uniform_prior(p_y_given_x: np.ndarray, p_x: np.ndarray, tol: float, max_iter: int) -> np.ndarray:
    """Multiply p(y | x) by lambda(y) = (1/C) / p(y) and renormalise until max |p(y) - 1/C| <= tol."""
    C = p_y_given_x.shape[-1]
    target = np.full(C, 1.0 / C)
    p = p_y_given_x / p_y_given_x.sum(axis=-1, keepdims=True)
    for _ in range(max_iter):
        p_y = p_x @ p
        if np.max(np.abs(p_y - target)) <= tol:
            return p
        p = p * (target / p_y)[None, :]
        p = p / p.sum(axis=-1, keepdims=True)
    raise RuntimeError(
        f"class prior did not reach uniform within tol={tol} in {max_iter} iterations; "
        f"raise prior_max_iter or prior_tol"
    )


@dataclass
class Distribution:
    """The exact joint law: p(y | x_c, x_u1, x_u2) on every one of the 2^(S+2K) inputs (uniform p(x))."""

    xc: np.ndarray  # (2^S, S)
    xu: np.ndarray  # (2^K, K)
    p_y: np.ndarray  # (2^S, 2^K, 2^K, C): p(y | x_c, x_u1, x_u2)
    subsets: tuple  # (red, uni1, uni2) bit indices read by the label

    @property
    def n_classes(self) -> int:
        return self.p_y.shape[-1]


def build_distribution(uniqueness: int, spec: GeneratorSpec) -> Distribution:
    """p(y | x) for every x (Section 3: logits = feats W, softmax at temperature T, uniform prior)."""
    red, uni1, uni2 = feature_subsets(uniqueness, spec)
    xc, xu = all_bit_vectors(spec.shared_dim), all_bit_vectors(spec.unique_dim)
    W = label_weights(spec)
    nc, nu = len(xc), len(xu)
    # logit contributions of each block add up: feats @ W = xc[red] W_r + xu1[uni1] W_1 + xu2[uni2] W_2
    r, u1 = len(red), len(uni1)
    lc = xc[:, red] @ W[:r]  # (nc, C)
    l1 = xu[:, uni1] @ W[r : r + u1]  # (nu, C)
    l2 = xu[:, uni2] @ W[r + u1 :]  # (nu, C)
    logits = lc[:, None, None, :] + l1[None, :, None, :] + l2[None, None, :, :]
    q = softmax(logits / spec.temperature).reshape(-1, spec.n_classes)
    p_x = np.full(q.shape[0], 1.0 / q.shape[0])
    p = rescale_to_uniform_prior(q, p_x, spec.prior_tol, spec.prior_max_iter)
    return Distribution(xc=xc, xu=xu, p_y=p.reshape(nc, nu, nu, spec.n_classes), subsets=(red, uni1, uni2))


def entropy(p: np.ndarray, axis: int = -1) -> np.ndarray:
    """Shannon entropy in nats, 0 log 0 = 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(p > 0, -p * np.log(p), 0.0)
    return t.sum(axis=axis)


def mutual_information(dist: Distribution) -> dict[str, float]:
    """Exact I(X1, X2; Y), I(X1; Y), I(X2; Y) in nats (x1, x2 together determine (x_c, x_u1, x_u2))."""
    p = dist.p_y
    h_y = float(entropy(p.mean(axis=(0, 1, 2))))
    joint = h_y - float(entropy(p).mean())
    p_y_x1 = p.mean(axis=2)  # p(y | x_c, x_u1): x_u2 uniform and independent
    p_y_x2 = p.mean(axis=1)
    return {
        "I(X1,X2;Y)": joint,
        "I(X1;Y)": h_y - float(entropy(p_y_x1).mean()),
        "I(X2;Y)": h_y - float(entropy(p_y_x2).mean()),
        "H(Y)": h_y,
    }


def class_prior(dist: Distribution) -> np.ndarray:
    """p(y) under uniform inputs."""
    return dist.p_y.reshape(-1, dist.n_classes).mean(axis=0)


def sample(dist: Distribution, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n draws (x1, x2, y): uniform bits, then y ~ p(y | x) by inverse CDF."""
    nc, nu = len(dist.xc), len(dist.xu)
    ic = rng.integers(0, nc, size=n)
    i1 = rng.integers(0, nu, size=n)
    i2 = rng.integers(0, nu, size=n)
    cdf = np.cumsum(dist.p_y[ic, i1, i2], axis=1)
    u = rng.random(n)[:, None]
    y = np.minimum((u > cdf).sum(axis=1), dist.n_classes - 1)
    x1 = np.concatenate([dist.xc[ic], dist.xu[i1]], axis=1)
    x2 = np.concatenate([dist.xc[ic], dist.xu[i2]], axis=1)
    return x1, x2, y.astype(np.int64)


def heterogeneity_transforms(dim: int, max_depth: int, seed: int):
    """phi_0 .. phi_max_depth, drawn in sequence after torch seed `seed` (the official draw order):
    phi_D = Linear(dim, dim) followed by D x [Tanh, Linear(dim, dim)], default PyTorch init."""
    import torch
    from torch import nn

    out = []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for depth in range(max_depth + 1):
            layers = [nn.Linear(dim, dim)]
            for _ in range(depth):
                layers += [nn.Tanh(), nn.Linear(dim, dim)]
            out.append(nn.Sequential(*layers).double().eval())
    return out


def apply_transform(transform, x: np.ndarray) -> np.ndarray:
    import torch

    with torch.no_grad():
        return transform(torch.as_tensor(x, dtype=torch.float64)).numpy()
