"""Greedy best response and its tie-break, utilities, the logit response, the lower-bound instance."""

import numpy as np
import pytest

from methods.principal_agent import model as M
from methods.principal_agent.experiments import logit_single_arm_table


def test_greedy_agent_picks_its_best_arm_given_the_incentive():
    inst = M.Instance(mu=np.array([[0.2, 0.7, 0.5]]), v=np.array([1.0, 0.0, 0.5]))
    assert M.greedy_response(inst, np.zeros((1, 3)))[0, 0] == 1
    assert M.greedy_response(inst, np.array([[0.6, 0.0, 0.0]]))[0, 0] == 0  # 0.8 > 0.7
    assert M.greedy_response(inst, np.array([[0.4, 0.0, 0.0]]))[0, 0] == 1  # 0.6 < 0.7
    # the principal pays only the incentive of the arm that is chosen
    np.testing.assert_allclose(
        M.greedy_utility(inst, np.array([[0.6, 0.0, 0.3]])), [[1.0 - 0.6]]
    )  # tie 0.8 = 0.8: arm 0 nets more
    np.testing.assert_allclose(M.greedy_utility(inst, np.array([[0.0, 0.0, 0.1]])), [[0.0]])


def test_ties_go_to_the_principal_then_to_the_lowest_index():
    mu = np.array([[0.5, 0.5, 0.2]])
    assert M.greedy_response(M.Instance(mu, np.array([0.1, 0.9, 0.0])), np.zeros((1, 3)))[0, 0] == 1
    assert M.greedy_response(M.Instance(mu, np.array([0.9, 0.1, 0.0])), np.zeros((1, 3)))[0, 0] == 0
    assert M.greedy_response(M.Instance(mu, np.array([0.4, 0.4, 0.0])), np.zeros((1, 3)))[0, 0] == 0
    # an incentive that exactly closes the gap makes a tie; the principal nets 0.9 - 0.3 > 0.2 on arm 2
    inst = M.Instance(np.array([[0.7, 0.1, 0.4]]), np.array([0.2, 0.0, 0.9]))
    assert M.greedy_response(inst, np.array([[0.0, 0.0, 0.7 - 0.4]]))[0, 0] == 2
    # ... unless the payment makes the incentivised arm worse for her than the agent's default
    inst = M.Instance(np.array([[0.7, 0.1, 0.4]]), np.array([0.8, 0.0, 0.9]))
    assert M.greedy_response(inst, np.array([[0.0, 0.0, 0.3]]))[0, 0] == 0


def test_threshold_incentive_moves_the_type_despite_rounding():
    rng = np.random.default_rng(0)
    for _ in range(50):
        inst = M.random_instance(rng, 3, 6)
        gaps = inst.mu.max(axis=1, keepdims=True) - inst.mu
        for j in range(3):
            for i in range(6):
                pi = M.single_arm_incentives([i], [gaps[j, i]], 6)
                chosen = M.greedy_response(inst, pi)[0, j]
                # at the threshold the type is indifferent; the principal-favourable tie-break decides
                best_default = inst.v[M.greedy_response(inst, np.zeros((1, 6)))[0, j]]
                assert chosen == i or inst.v[i] - gaps[j, i] <= best_default + 1e-12


def test_logit_probabilities_are_a_distribution_and_1_over_tau_lipschitz():
    rng = np.random.default_rng(1)
    inst = M.random_instance(rng, 4, 5)
    tau = 0.3
    pi = rng.uniform(size=(200, 5))
    dpi = pi + rng.uniform(-0.05, 0.05, size=pi.shape)
    p, q = M.logit_probabilities(inst, pi, tau), M.logit_probabilities(inst, dpi, tau)
    np.testing.assert_allclose(p.sum(axis=2), 1.0)
    l1 = np.abs(p - q).sum(axis=2)
    assert np.all(l1 <= M.logit_lipschitz(tau) * np.abs(pi - dpi).max(axis=1)[:, None] + 1e-12)


def test_closed_form_logit_table_matches_the_generic_expectation():
    rng = np.random.default_rng(2)
    inst = M.random_instance(rng, 3, 4)
    arms, amounts = rng.integers(0, 4, size=30), rng.uniform(size=30)
    pi = M.single_arm_incentives(arms, amounts, 4)
    generic = M.expected_utility(M.logit_probabilities(inst, pi, 0.25), inst.v, pi)  # (M, K)
    np.testing.assert_allclose(logit_single_arm_table(inst, 0.25, arms, amounts).T, generic, atol=1e-12)


@pytest.mark.parametrize("a", [0.3, 0.5, 0.7])
def test_lower_bound_instance_rewards_only_the_window(a):
    inst = M.lower_bound_instance(a, 1e-9)
    balanced = np.array([0.5, 0.5])
    value = lambda pi: float((M.greedy_utility(inst, pi) @ balanced)[0])  # noqa: E731
    inside = value(M.single_arm_incentives([2], [a + 5e-10], 3))
    outside = [
        value(M.single_arm_incentives([i], [x], 3))
        for i in range(3)
        for x in np.linspace(0, 1, 401)
        if not (i == 2 and a <= x <= a + 1e-9)
    ]
    assert inside == pytest.approx(1 - a / 2, abs=1e-8)
    assert inside - max(outside) >= min(a, 1 - a) / 2 - 1e-8
