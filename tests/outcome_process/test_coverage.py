"""Coverage coefficients on hand-built MDPs, and the bounds around the change-of-measure ratio."""

import numpy as np
import pytest

from methods.outcome_process.coverage import (
    max_reach,
    mixture_policy,
    sa_coverage,
    second_moment,
    traj_coverage,
    trajectory_measure_ratio,
)
from methods.outcome_process.experiments import lemma_rows
from methods.outcome_process.mdp import (
    chain_mdp,
    occupancy,
    one_hot,
    sample_trajectories,
    stochastic_mdp,
    tree_mdp,
    uniform_policy,
)


@pytest.mark.parametrize("H", [3, 6, 9])
def test_uniform_on_the_binary_chain(H):
    """State = last action: every (s, a) has probability 1/4 after step 1, so C_sa = 4; C_traj = 2^H."""
    mdp = chain_mdp(H, 2, 2, np.random.default_rng(0))
    mu = uniform_policy(mdp)
    assert np.isclose(sa_coverage(mdp, mu), 4.0)
    assert np.isclose(traj_coverage(mdp, mu), 2.0**H)


@pytest.mark.parametrize("eps", [1.0, 0.5, 0.2])
def test_eps_mixture_on_the_binary_chain(eps):
    """mu plays action 0 w.p. 1 - eps/2: state 1 then action 1 has probability (eps/2)^2, so C_sa = 4/eps^2."""
    H = 5
    mdp = chain_mdp(H, 2, 2, np.random.default_rng(0))
    mu = mixture_policy(mdp, np.zeros((H, 2), dtype=int), eps)
    assert np.isclose(sa_coverage(mdp, mu), 4 / eps**2)
    assert np.isclose(traj_coverage(mdp, mu), (2 / eps) ** H)
    always_zero = one_hot(np.zeros((H, 2), dtype=int), 2)
    assert np.isclose(traj_coverage(mdp, mu, always_zero), (1 / (1 - eps / 2)) ** H)


def test_tree_coverages_coincide():
    """In a tree each leaf is one trajectory: C_sa (last layer) = C_traj = A^H under uniform mu."""
    mdp = tree_mdp(4, 3, np.random.default_rng(0))
    mu = uniform_policy(mdp)
    assert np.isclose(sa_coverage(mdp, mu), 3.0**4)
    assert np.isclose(traj_coverage(mdp, mu), 3.0**4)


def test_uncovered_action_gives_infinite_coverage():
    mdp = chain_mdp(3, 2, 2, np.random.default_rng(0))
    mu = one_hot(np.zeros((3, 2), dtype=int), 2)
    assert sa_coverage(mdp, mu) == np.inf and traj_coverage(mdp, mu) == np.inf


def test_max_reach_of_a_stochastic_mdp_bounds_every_policy():
    rng = np.random.default_rng(4)
    mdp = stochastic_mdp(4, 3, 2, 0.5, rng)
    reach = max_reach(mdp)
    for _ in range(20):
        pi = one_hot(rng.integers(0, 2, size=(4, 3)), 2)
        assert (occupancy(mdp, pi).sum(-1) <= reach + 1e-12).all()
    assert np.allclose(reach[0], mdp.rho)


def test_second_moment_matches_samples():
    rng = np.random.default_rng(5)
    mdp = stochastic_mdp(3, 2, 2, 0.5, rng)
    mu = uniform_policy(mdp)
    M = second_moment(mdp, mu)
    states, actions, _ = sample_trajectories(mdp, mu, 100000, rng)
    idx = (np.arange(3)[None, :] * 2 + states) * 2 + actions
    phi = np.zeros((len(idx), M.shape[0]))
    np.put_along_axis(phi, idx, 1.0, axis=1)
    assert np.abs(phi.T @ phi / len(idx) - M).max() < 0.01


@pytest.mark.parametrize("family", ["chain", "stochastic", "tree"])
def test_ratio_lies_between_the_two_coverages(family):
    """C_sa <= kappa (f an indicator) and kappa <= C_traj (pointwise density ratio)."""
    rng = np.random.default_rng(6)
    mdp = {
        "chain": chain_mdp(5, 2, 2, rng),
        "stochastic": stochastic_mdp(4, 3, 2, 0.5, rng),
        "tree": tree_mdp(4, 2, rng),
    }[family]
    mu = mixture_policy(mdp, rng.integers(0, 2, size=(mdp.H, mdp.S)), 0.5)
    for r in lemma_rows(mdp, mu, 3, rng, family):
        assert r["c_sa"] * (1 - 1e-8) <= r["kappa"] <= r["c_traj"] * (1 + 1e-8)


def test_ratio_of_a_policy_with_itself_is_one():
    mdp = stochastic_mdp(4, 3, 2, 0.5, np.random.default_rng(7))
    M = second_moment(mdp, uniform_policy(mdp))
    keep = np.diag(M) > 0
    assert np.isclose(trajectory_measure_ratio(M[np.ix_(keep, keep)], M[np.ix_(keep, keep)]), 1.0)


def test_trajectories_to_reach_interpolates_the_first_crossing():
    from methods.outcome_process.experiments import trajectories_to_reach

    n = [10, 100, 1000]
    assert trajectories_to_reach(n, [1.0, 0.5, 0.1], 1.0) == 10
    assert np.isclose(trajectories_to_reach(n, [1.0, 0.5, 0.1], 0.3), 10**2.5)
    assert trajectories_to_reach(n, [1.0, 0.5, 0.4], 0.1) == np.inf
