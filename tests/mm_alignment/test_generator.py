"""The controlled generator: uniform class prior, exact mutual information against a brute-force
enumeration, the official I(X1, X2; Y) = 1.159 nats, redundancy vs uniqueness."""

import itertools

import numpy as np
import pytest
import torch

from methods.mm_alignment.generator import (
    GeneratorSpec,
    apply_transform,
    build_distribution,
    class_prior,
    heterogeneity_transforms,
    label_weights,
    mutual_information,
    sample,
    split_label_features,
)

SMALL = GeneratorSpec(shared_dim=3, unique_dim=2, n_label_features=3, n_classes=3, temperature=0.5)


def brute_force_information(dist, spec):
    """I(X1,X2;Y), I(X1;Y) by summing p(x, y) log p(x, y) / (p(x) p(y)) over every (x, y)."""
    S, K = spec.shared_dim, spec.unique_dim
    joint_x1 = {}
    total = 0.0
    p_y = class_prior(dist)
    n_x = 2 ** (S + 2 * K)
    for ic, i1, i2 in itertools.product(range(2**S), range(2**K), range(2**K)):
        for y in range(spec.n_classes):
            pxy = dist.p_y[ic, i1, i2, y] / n_x
            total += pxy * np.log(pxy / (p_y[y] / n_x))
            joint_x1[(ic, i1, y)] = joint_x1.get((ic, i1, y), 0.0) + pxy
    n_x1 = 2 ** (S + K)
    i1_total = sum(p * np.log(p / (p_y[y] / n_x1)) for (_, _, y), p in joint_x1.items())
    return total, i1_total


@pytest.mark.parametrize("u", [0, 1, 3])
def test_exact_information_on_small_case(u):
    dist = build_distribution(u, SMALL)
    info = mutual_information(dist)
    joint, i1 = brute_force_information(dist, SMALL)
    assert info["I(X1,X2;Y)"] == pytest.approx(joint, rel=1e-10)
    assert info["I(X1;Y)"] == pytest.approx(i1, rel=1e-10)


def test_label_law_is_the_tempered_softmax_up_to_class_factors():
    """p(y | x) = softmax(feats W / T) times a per-class factor, renormalised (prior rescaling)."""
    u = 1
    dist = build_distribution(u, SMALL)
    red, uni1, uni2 = dist.subsets
    W = label_weights(SMALL)
    ic, i1, i2 = 2, 1, 3
    feats = np.concatenate([dist.xc[ic][red], dist.xu[i1][uni1], dist.xu[i2][uni2]])
    z = feats @ W / SMALL.temperature
    q = np.exp(z - z.max())
    q /= q.sum()
    ratio = dist.p_y[ic, i1, i2] / q
    other = dist.p_y[0, 0, 0] / (lambda z: np.exp(z - z.max()) / np.exp(z - z.max()).sum())(
        np.concatenate([dist.xc[0][red], dist.xu[0][uni1], dist.xu[0][uni2]]) @ W / SMALL.temperature
    )
    # the class factors are shared by every x: ratios agree up to one scalar
    assert np.allclose(ratio / ratio.sum(), other / other.sum())
    assert np.allclose(np.linalg.norm(W, axis=1), 1.0) and (W >= 0).all()


@pytest.mark.parametrize("u", [0, 3, 6, 8])
def test_class_prior_is_uniform(u):
    spec = GeneratorSpec(prior_tol=1e-10)
    dist = build_distribution(u, spec)
    assert np.allclose(class_prior(dist), 0.25, atol=1e-9)
    _, _, y = sample(dist, 40000, np.random.default_rng(0))
    freq = np.bincount(y, minlength=4) / len(y)
    assert np.all(np.abs(freq - 0.25) < 4 * np.sqrt(0.25 * 0.75 / len(y)))


def test_official_information_and_redundancy():
    spec = GeneratorSpec()
    full = mutual_information(build_distribution(0, spec))
    assert full["I(X1,X2;Y)"] == pytest.approx(1.159, abs=5e-4)  # "mi=1.159" in the official file names
    assert full["I(X1;Y)"] == pytest.approx(full["I(X1,X2;Y)"]) == pytest.approx(full["I(X2;Y)"])
    uniq = mutual_information(build_distribution(6, spec))
    assert uniq["I(X1;Y)"] < full["I(X1;Y)"] - 0.3 and uniq["I(X2;Y)"] < full["I(X2;Y)"] - 0.3


def test_split_and_samples():
    assert split_label_features(0, GeneratorSpec()) == (8, 0, 0)
    assert split_label_features(7, GeneratorSpec()) == (1, 3, 4)
    with pytest.raises(ValueError, match="uniqueness"):
        split_label_features(9, GeneratorSpec())
    dist = build_distribution(4, GeneratorSpec())
    x1, x2, y = sample(dist, 100, np.random.default_rng(1))
    assert x1.shape == (100, 12) and np.array_equal(x1[:, :8], x2[:, :8])
    assert set(np.unique(x1)) <= {0.0, 1.0}


def test_heterogeneity_transforms():
    phis = heterogeneity_transforms(12, 4, seed=0)
    assert [sum(isinstance(m, torch.nn.Tanh) for m in p) for p in phis] == [0, 1, 2, 3, 4]
    again = heterogeneity_transforms(12, 4, seed=0)
    x = np.random.default_rng(0).integers(0, 2, size=(5, 12)).astype(float)
    assert np.allclose(apply_transform(phis[3], x), apply_transform(again[3], x))
    # phi_0 is affine: phi(a) + phi(b) - phi(0) = phi(a + b)
    a, b, z = x[:1], x[1:2], np.zeros((1, 12))
    f = lambda v: apply_transform(phis[0], v)  # noqa: E731
    assert np.allclose(f(a) + f(b) - f(z), f(a + b))
