"""binary_denoising exact enumeration: the transition matrix, its stationary law and rates
against independently computed references on tiny hypercubes."""

import itertools
import math

import numpy as np
import pytest
import torch

from methods.binary_denoising.exact import (
    dobrushin_rate,
    exact_chain_metrics,
    marginal_z,
    metropolis_matrix,
    proposal_logits,
    run_chain,
    slem,
    stationary,
    transition_matrix,
    z_tolerance,
)
from methods.binary_denoising.mixture import BernoulliMixture, random_mixture
from methods.binary_denoising.noise import hypercube

torch.set_num_threads(1)


def _mixture(d, seed=0):
    m = random_mixture(d, 3, 0.8, torch.Generator().manual_seed(seed))
    return BernoulliMixture(m.weights.double(), m.means.double())


def _brute_posterior_mean(mixture, states, alpha):
    """E[x | y] by summing over all x: p(x) exp(alpha x.y) / sum."""
    xs = states
    log_w = mixture.log_prob(xs)[None, :] + alpha * states @ xs.T
    w = torch.softmax(log_w, dim=1)
    return w @ xs


def test_transition_matrix_is_the_product_of_bit_probabilities():
    d, alpha, eta = 4, 0.7, 2.0
    mix, states = _mixture(d), hypercube(d).double()
    logits = proposal_logits(states, mix, alpha, eta)
    # the exact denoiser used in the logits is the brute-force posterior mean
    assert torch.allclose(logits, alpha * _brute_posterior_mean(mix, states, alpha) + 2 * states / eta, atol=1e-10)
    p = transition_matrix(states, logits)
    assert np.allclose(p.sum(1), 1.0, atol=1e-12)
    for a, b in [(0, 0), (3, 9), (15, 2)]:
        ref = math.prod(1 / (1 + math.exp(-float(states[b, i]) * float(logits[a, i]))) for i in range(d))
        assert p[a, b] == pytest.approx(ref, rel=1e-10)


def test_stationary_law_solves_the_balance_and_matches_a_matrix_power():
    d = 4
    mix, states = _mixture(d, 1), hypercube(d).double()
    p = transition_matrix(states, proposal_logits(states, mix, 0.5, 4.0))
    pi = stationary(p)
    assert np.allclose(pi @ p, pi, atol=1e-12) and pi.sum() == pytest.approx(1.0)
    power = np.linalg.matrix_power(p, 200)[0]
    assert np.allclose(pi, power, atol=1e-10)


def test_metropolis_keeps_q_and_satisfies_detailed_balance():
    d, alpha = 4, 1.5
    mix, states = _mixture(d, 2), hypercube(d).double()
    log_q = mix.log_q(states, alpha).numpy()
    q = np.exp(log_q) / np.exp(log_q).sum()
    k = metropolis_matrix(transition_matrix(states, proposal_logits(states, mix, alpha, 4.0)), log_q)
    assert np.allclose(k.sum(1), 1.0) and (k >= -1e-15).all()
    flux = q[:, None] * k
    assert np.allclose(flux, flux.T, atol=1e-14)
    assert np.allclose(q @ k, q, atol=1e-14)


def test_slem_of_a_two_state_chain():
    a, b = 0.3, 0.1
    p = np.array([[1 - a, a], [b, 1 - b]])
    assert slem(p) == pytest.approx(1 - a - b)
    assert stationary(p) == pytest.approx([b / (a + b), a / (a + b)])


def test_dobrushin_rate_against_brute_force_and_bounds_slem():
    d = 4
    mix, states = _mixture(d, 3), hypercube(d).double()
    logits = proposal_logits(states, mix, 0.8, 4.0)
    prob = torch.sigmoid(logits).numpy()
    pts = [tuple(int(v) for v in s) for s in states.tolist()]
    index = {s: n for n, s in enumerate(pts)}
    infl = np.zeros((d, d))
    for n, s in enumerate(pts):
        for j in range(d):
            t = list(s)
            t[j] = -t[j]
            infl[:, j] = np.maximum(infl[:, j], np.abs(prob[n] - prob[index[tuple(t)]]))
    assert dobrushin_rate(states, logits) == pytest.approx(infl.sum(0).max(), rel=1e-12)
    assert slem(transition_matrix(states, logits)) <= dobrushin_rate(states, logits) + 1e-12


def test_product_prior_matches_the_closed_form_two_state_chains():
    # one component: every bit runs its own two-state chain with
    # P(+ | y_i) = sigmoid(alpha tanh(atanh(mu) + alpha y_i) + 2 y_i / eta); its stationary P(+) is b / (a + b)
    # (a = P(+ -> -), b = P(- -> +)) and its only nontrivial eigenvalue 1 - a - b is both the SLEM of the
    # product chain and its Dobrushin coefficient
    d, alpha, eta, mu = 5, 0.6, 3.0, 0.5
    mix = BernoulliMixture(torch.ones(1, dtype=torch.float64), torch.full((1, d), mu, dtype=torch.float64))
    states = hypercube(d).double()
    logits = proposal_logits(states, mix, alpha, eta)
    sig = lambda z: 1 / (1 + math.exp(-z))  # noqa: E731
    p_plus = {s: sig(alpha * math.tanh(math.atanh(mu) + alpha * s) + 2 * s / eta) for s in (-1, 1)}
    a, b = 1 - p_plus[1], p_plus[-1]
    p = transition_matrix(states, logits)
    pi = stationary(p)
    pi_plus = b / (a + b)
    y = states.numpy()
    ref = np.prod(np.where(y > 0, pi_plus, 1 - pi_plus), axis=1)
    assert np.allclose(pi, ref, atol=1e-12)
    assert slem(p) == pytest.approx(abs(1 - a - b), rel=1e-8)
    assert dobrushin_rate(states, logits) == pytest.approx(abs(1 - a - b), rel=1e-10)
    # and the target q_alpha is the product of (1 + tanh(alpha) mu) / 2: the unadjusted chain is biased
    q_plus = (1 + math.tanh(alpha) * mu) / 2
    assert abs(pi_plus - q_plus) > 1e-3


def test_sampled_chain_marginals_within_the_sampling_tolerance():
    d = 6
    mix, states = _mixture(d, 4), hypercube(d).double()
    p = transition_matrix(states, proposal_logits(states, mix, 1.0, 4.0))
    pi = stationary(p)
    n = 4000
    draws = run_chain(p, n, 40, np.random.default_rng(0))
    z = marginal_z(states, pi, draws)
    assert z <= z_tolerance(d)
    # the tolerance on each mean is z * sqrt(Var / n): check one bit against it directly
    y = states.numpy()
    mean0 = pi @ y[:, 0]
    assert abs(y[draws, 0].mean() - mean0) <= z_tolerance(d) * math.sqrt((1 - mean0**2) / n)
    # a wrong reference (q instead of the unadjusted chain's pi) is detected at this sample size
    log_q = mix.log_q(states, 1.0).numpy()
    q = np.exp(log_q) / np.exp(log_q).sum()
    assert marginal_z(states, q, draws) > z_tolerance(d)


def test_metrics_reject_a_large_hypercube_and_report_every_alpha():
    with pytest.raises(ValueError, match="d <= 12"):
        exact_chain_metrics(13, 2, 0.8, [0.5, 1.0], 4.0, [1.0, 4.0], 10, 2, 0)
    out = exact_chain_metrics(4, 2, 0.8, [0.25, 2.0], 4.0, [1.0, 16.0], 200, 20, 0)
    assert [r["alpha"] for r in out["rows"]] == [0.25, 2.0]
    for r in out["rows"]:
        assert set(r["bias_tv"]) == {"1.0", "4.0", "16.0"}
        assert max(r["mh_tv"].values()) < 1e-12
        assert r["slem"] <= r["dobrushin"] + 1e-12


def test_hypercube_order_matches_the_bit_flip_index():
    d = 3
    states = hypercube(d)
    for n, j in itertools.product(range(2**d), range(d)):
        flipped = states[n].clone()
        flipped[j] = -flipped[j]
        assert torch.equal(states[n ^ (1 << (d - 1 - j))], flipped)
