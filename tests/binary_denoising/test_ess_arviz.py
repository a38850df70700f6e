"""Our effective sample size against ArviZ's `ess` (the maintained estimator) on seeded AR(1) chains.

ArviZ is not a dependency (the test is skipped without it). It does not compute the same estimator (split
chains, between-chain variance, Geyer's initial monotone sequence), so the two agree only on chains that mix
fast; on slowly mixing chains ours is higher (the README's "Where we differ" quotes these numbers).
"""
import numpy as np
import pytest

from methods.binary_denoising.metrics import ess_per_step

arviz = pytest.importorskip("arviz")


def ar1_chains(phi: float, steps: int = 200, chains: int = 100, seed: int = 0) -> np.ndarray:
    """Stationary AR(1) chains, array (steps, chains): x_t = phi x_{t-1} + e_t."""
    rng = np.random.default_rng(seed)
    e = rng.standard_normal((steps, chains))
    x = np.zeros((steps, chains))
    x[0] = e[0] / np.sqrt(1 - phi**2)
    for t in range(1, steps):
        x[t] = phi * x[t - 1] + e[t]
    return x


def _both(phi):
    x = ar1_chains(phi)
    return ess_per_step(x), float(arviz.ess(x.T.copy(), method="mean", relative=True))


@pytest.mark.parametrize("phi", [0.0, 0.5])
def test_ours_equals_arviz_on_fast_mixing_chains(phi):
    ours, theirs = _both(phi)
    assert ours == pytest.approx(theirs, rel=0.02)


def test_ours_is_higher_than_arviz_and_the_exact_value_on_slow_chains():
    ours, theirs = _both(0.98)
    exact = (1 - 0.98) / (1 + 0.98)
    assert theirs == pytest.approx(exact, rel=0.1)
    assert ours > 2 * theirs
