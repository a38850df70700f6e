"""Regret bookkeeping on a hand-computed game, horizons of batched runs, the adversaries."""

import numpy as np
import pytest

from methods.principal_agent.adversaries import Adversary
from methods.principal_agent.simulate import Game, best_fixed_value, play, regret


class FixedLearner:
    """Plays a fixed distribution and learns nothing: its booked utility is computable by hand."""

    def __init__(self, probs, horizons):
        self.p = np.asarray(probs, float)
        self.horizons = np.asarray(horizons)

    def probs(self, m):
        return np.repeat(self.p[None], m, axis=0)

    def sample(self, rng, probs):
        return rng.choice(len(self.p), size=len(probs), p=self.p)

    def update(self, m, action, reward, probs):
        pass


def test_regret_bookkeeping_on_a_hand_computed_game():
    # two types, two incentives: U(a, j) below; types arrive 0, 1, 1, 0, 1, 1 (T = 6)
    table = np.array([[[1.0, 0.2], [0.0, 0.6]]])  # (R=1, K=2, k=2): rows are types
    adv = Adversary("periodic", np.array([2]), 6, np.random.default_rng(0), period=3)
    adv.pattern = np.array([[0, 1, 1]])
    out = play(FixedLearner([0.5, 0.5], [6]), Game(table), adv, np.random.default_rng(1))
    np.testing.assert_array_equal(out["counts"], [[2, 4]])
    assert out["booked"][0] == pytest.approx(2 * 0.6 + 4 * 0.3)  # 2.4
    best = best_fixed_value(table, out["counts"])  # max(2*1 + 4*0, 2*0.2 + 4*0.6) = 2.8
    assert best[0] == pytest.approx(2.8)
    assert regret(best, out["booked"])[0] == pytest.approx(0.4)


def test_batched_runs_stop_at_their_own_horizon():
    table = np.repeat(np.array([[[1.0, 0.0]]]), 2, axis=0)  # one type, action 0 pays 1
    adv = Adversary("random", np.array([1, 1]), 10, np.random.default_rng(0))
    out = play(FixedLearner([0.25, 0.75], [10, 4]), Game(table), adv, np.random.default_rng(1))
    np.testing.assert_array_equal(out["counts"][:, 0], [10, 4])
    np.testing.assert_allclose(out["booked"], [2.5, 1.0])
    np.testing.assert_allclose(regret(best_fixed_value(table, out["counts"]), out["booked"]), [7.5, 3.0])


@pytest.mark.parametrize("kind", ["blocked", "periodic", "random", "adaptive"])
def test_adversaries_send_valid_types(kind):
    n_types = np.array([2, 3, 5])
    adv = Adversary(kind, n_types, 500, np.random.default_rng(0), block_length=10, period=4)
    last = np.random.default_rng(1).uniform(size=(3, 5))
    types = np.array([adv.types(t, 3, last) for t in range(500)])
    assert np.all(types >= 0) and np.all(types < n_types[None, :])
    if kind == "blocked":
        assert np.all(types[:10] == types[0])
    if kind == "periodic":
        np.testing.assert_array_equal(types[:4], types[4:8])


def test_adaptive_adversary_reacts_to_the_last_choice():
    adv = Adversary("adaptive", np.array([3]), 100, np.random.default_rng(0), adaptive_prob=1.0)
    last = np.array([[0.5, -0.2, 0.9]])
    assert all(adv.types(t, 1, last)[0] == 1 for t in range(20))
