"""pCN leaves its target invariant: a Gaussian prior times a Gaussian likelihood."""

import math

import torch

from methods.neural_bridges.baselines import pcn


def _run(eta, accept_all=False, n_chains=20000, n_iters=15):
    d, s2 = 3, 0.5
    c = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    post_var = s2 / (1 + s2)
    post_mean = c / (1 + s2)
    gen = torch.Generator().manual_seed(0)
    z0 = post_mean + math.sqrt(post_var) * torch.randn(n_chains, d, generator=gen, dtype=torch.float64)

    def log_lik(z):
        ll = -0.5 * ((z - c) ** 2).sum(-1) / s2
        return (torch.zeros_like(ll) if accept_all else ll), z

    kept, acc, _ = pcn(
        z0,
        log_lik,
        lambda: torch.randn(n_chains, d, generator=gen, dtype=torch.float64),
        eta,
        n_iters,
        burn_in=n_iters - 1,
        thin=1,
        uniform=lambda shape: torch.rand(shape, generator=gen, dtype=torch.float64),
    )
    z = kept[:, -1]
    return z.mean(0), z.var(0), post_mean, torch.full((d,), post_var, dtype=torch.float64), acc


def test_pcn_keeps_gaussian_posterior():
    m, v, pm, pv, acc = _run(eta=0.5)
    se = (pv / 20000).sqrt()
    assert torch.all((m - pm).abs() < 4 * se)
    assert torch.all((v / pv - 1).abs() < 0.06)
    assert 0.05 < float(acc.mean()) < 0.95


def test_invariance_check_has_power():
    """Accepting every proposal samples the prior instead: the same check must fail."""
    m, v, pm, pv, _ = _run(eta=0.5, accept_all=True)
    se = (pv / 20000).sqrt()
    assert not (torch.all((m - pm).abs() < 4 * se) and torch.all((v / pv - 1).abs() < 0.06))
