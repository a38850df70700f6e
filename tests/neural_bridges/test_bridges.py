"""Euler-Maruyama, the ensemble network and the pipeline's closed forms."""

import math

import torch

from methods.neural_bridges.bridges import EnsembleMLP, TrainConfig, train_neural_bridge
from methods.neural_bridges.experiments import linear_setup
from methods.neural_bridges.metrics import wasserstein1
from methods.neural_bridges.sde import (
    brownian_increments,
    euler_maruyama,
    linear_bridge_marginal,
    ornstein_uhlenbeck,
    time_grid,
)


def test_euler_maruyama_ou_marginal():
    diff = ornstein_uhlenbeck(1.7, 1.0, 0.3)
    ts = time_grid(1.0, 200)
    gen = torch.Generator().manual_seed(0)
    dW = brownian_increments(20000, ts, 1, gen, dtype=torch.float64)
    path = euler_maruyama(torch.tensor([0.0]), ts, dW, diff.drift, diff.sigma.double())
    x = path[:, -1, 0]
    m = 1.0 - math.exp(-1.7)
    var = 0.09 * (1 - math.exp(-3.4)) / 3.4
    assert abs(float(x.mean()) - m) < 0.01
    assert abs(float(x.var()) / var - 1) < 0.05


def test_bridge_marginal_brownian_is_brownian_bridge():
    m, v = linear_bridge_marginal(0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.25, 0.0)
    assert abs(m) < 1e-12 and abs(v - 0.25 * 0.75) < 1e-12


def test_ensemble_members_do_not_depend_on_each_other():
    a = EnsembleMLP([0, 5], 2, [8, 8])
    b = EnsembleMLP([5], 2, [8, 8])
    for wa, wb in zip(a.weights, b.weights):
        assert torch.equal(wa[1], wb[0])
    problem, _ = linear_setup(
        "ou", {"gamma": 1.7, "mu": 1.0, "sigma": 0.3, "x0": 0.0, "v": 1.0, "T": 1.0, "n_steps": 10}, 1e-5
    )
    cfg = TrainConfig(n_iters=3, batch=8, lr=1e-2, best_window=3)
    gens = lambda seeds: [torch.Generator().manual_seed(100 + s) for s in seeds]  # noqa: E731
    a1, b1 = EnsembleMLP([0, 5], 1, [8]), EnsembleMLP([5], 1, [8])
    train_neural_bridge(problem, a1, cfg, gens([0, 5]))
    train_neural_bridge(problem, b1, cfg, gens([5]))
    for wa, wb in zip(a1.weights, b1.weights):
        assert torch.allclose(wa[1], wb[0], atol=1e-6)


def test_wasserstein1_of_a_shift():
    x = torch.randn(5000, generator=torch.Generator().manual_seed(0))
    assert abs(wasserstein1(x, x + 0.3) - 0.3) < 1e-6


def test_network_structure_is_official_mlpsmall():
    """Regression: no activation after the input layer, one after each further hidden layer, none at
    the output (an input-layer activation changes the output of a purely linear first layer)."""
    net = EnsembleMLP([0], 1, [6, 6])
    with torch.no_grad():
        for W in net.weights:
            W.zero_()
        for b in net.biases:
            b.zero_()
        net.weights[0][0, 0, 0] = 1.0  # h1[0] = t
        net.weights[1][0, 0, 0] = 1.0  # h2[0] = act(h1[0]) = act(t)
        net.weights[2][0, 0, 0] = 1.0  # out = h2[0]
    t = -0.8
    out = float(net(t, torch.zeros(1, 1, 1)).detach())
    assert abs(out - 0.909 * t / (1 + math.exp(-t))) < 1e-6  # one LipSwish; the old net applied two
    tanh_net = EnsembleMLP([0], 1, [6, 6], activation="tanh")
    tanh_net.load_state_dict(net.state_dict())
    assert abs(float(tanh_net(t, torch.zeros(1, 1, 1)).detach()) - math.tanh(t)) < 1e-6


def test_init_is_truncated_and_unknown_activation_is_refused():
    net = EnsembleMLP([3], 50, [200])
    w = net.weights[0][0].detach()
    assert float(w.abs().max()) <= 2.0 / 0.87962566103423978 * math.sqrt(2.0 / 51) + 1e-7
    try:
        EnsembleMLP([0], 2, [4], activation="relu")
    except ValueError as e:
        assert "relu" in str(e)
    else:
        raise AssertionError("an unknown activation was accepted")
