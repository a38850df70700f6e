"""Golden-value parity with the official code, bookdiver/neuralbridge at commit
e73b878b99d8a3b41685921dd31736cf764a277c (JAX 0.10.2, flax 0.10.4 as pinned by its pyproject, CPU, float32).

The numbers below were obtained by running, in a scratch environment outside this repository:
* `src/nn.py::MLPSmall(input_dim=2, output_dim=2, hidden_dims=[4, 4, 4], act_type=...)` with its four
  Linear layers' kernels set to `_weights(shape, i)` and biases to `_bias(n, i)` (i = 0..3 in the order
  in_fc, layers[0].fc, layers[1].fc, out_fc), evaluated at the three (t, x) of `POINTS`;
* `MLPSmall(400, 2, [400, 400], rngs=nnx.Rngs(0))`: std and max |w| of `layers[0].fc.kernel` over
  sqrt(2 / 400), the largest |bias|; the parameter count of `MLPSmall(2, 2, [32, 32, 32])`;
* `src/base.py::GuidedProposalSDE(CellSDE(sigma=0.1), CellAuxiliarySDE with beta(t) = 1, {v=(2, -0.1),
  L=I, Sigma=1e-10 I}, ts=linspace(0, 4, 101), eq_type="uLM")`: Hs, Fs at grid indices 0, 50, 99,
  and `G`, `r_tilde` at the (index, x) pairs of `GUIDED_POINTS`;
* `NeuralBridgeSDE(that guided proposal, MLPSmall [4, 4, 4] lipswish with the kernels above)
  .solve_with_gradients` from x0 = (0.1, -0.1), with `jax.random.normal` replaced by `_noise(b)` for paths
  b = 0, 1, 2, and the per-path loss of `trainer.train_step` (sum_k 1/2 |theta_k|^2 dt_k - int G dt).
Tolerance: 1e-5 relative (float32) for the network, the simulated path and the loss (measured: 6e-7);
2e-5 relative for H, F, r~ and G, which the official code integrates by Dopri5 in float32 and we by
RK4 in float64 (measured: 5.4e-6).
"""

import math

import numpy as np
import pytest
import torch

from methods.neural_bridges.bridges import BridgeProblem, EnsembleMLP, guided_terms, neural_bridge_loss, simulate_bridge
from methods.neural_bridges.sde import LinearAuxiliary, cell_model

POINTS = [(0.3, [0.5, -1.2]), (0.9, [1.0, 2.0]), (0.0, [-0.7, 0.1])]
MLP_OFFICIAL = {
    "lipswish": [
        [-0.021690472960472107, -0.0685710459947586],
        [0.028916317969560623, -0.025842614471912384],
        [-0.006822686642408371, -0.05326959490776062],
    ],
    "tanh": [
        [-0.014021549373865128, -0.08062157779932022],
        [0.23123474419116974, 0.13966093957424164],
        [0.06833861768245697, 0.004884682595729828],
    ],
}
INIT_STD_OVER_KAIMING = 0.9980601072311401  # std of a 400 x 400 kernel / sqrt(2 / 400)
INIT_MAX_OVER_KAIMING = 2.2736055850982666  # max |w| / sqrt(2 / 400): truncation at 2 / 0.8796
N_PARAMS_CELL = 2306
H_DIAG = {0: 0.06711488962173462, 50: 3.7314517498016357, 99: 2401.31982421875}
F = {
    0: [3.7314724922180176, -3.9636707305908203],
    50: [31.30339241027832, -26.597753524780273],
    99: [4900.6396484375, -347.9322509765625],
}
GUIDED_POINTS = [(0, [0.1, -0.1]), (50, [1.2, 0.3]), (99, [1.9, -0.05])]
G = [2.633823612541164e-07, 46.68922805786133, 563.2400512695312]
R_TILDE = [
    [3.7247610092163086, -3.9569592475891113],
    [26.82564926147461, -27.71718978881836],
    [338.1318359375, -227.8662567138672],
]
LOSS_PER_PATH = [-158.4729461669922, -157.77020263671875, -157.13507080078125]
PATH0_MID = [1.774827480316162, -0.03250652551651001]  # state after 50 steps
PATH0_END = [2.040536880493164, -0.15185028314590454]


def _weights(shape, layer):
    n = int(np.prod(shape))
    return (0.5 * np.sin(0.37 * np.arange(n) + 1.1 * layer)).reshape(shape).astype(np.float32)


def _bias(n, layer):
    return (0.1 * np.cos(0.53 * np.arange(n) + 0.7 * layer)).astype(np.float32)


def _noise(b, n_steps=100, dim=2):
    k, j = np.arange(n_steps)[:, None], np.arange(dim)[None, :]
    return (1.2 * np.sin(1.3 * k + 0.7 * j + 0.5 * b)).astype(np.float32)


def _deterministic_net(activation):
    net = EnsembleMLP([0], 2, [4, 4, 4], activation=activation)
    with torch.no_grad():
        for i, (W, b) in enumerate(zip(net.weights, net.biases)):
            W[0] = torch.from_numpy(_weights(tuple(W.shape[1:]), i))
            b[0, 0] = torch.from_numpy(_bias(b.shape[-1], i))
    return net


def _cell_problem():
    diff = cell_model(1.0 / 16, 0.1)
    aux = LinearAuxiliary(-torch.eye(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64), diff.sigma)
    return BridgeProblem(
        diff,
        aux,
        torch.tensor([0.1, -0.1], dtype=torch.float64),
        torch.tensor([2.0, -0.1], dtype=torch.float64),
        4.0,
        100,
        1e-5,
    )


@pytest.mark.parametrize("activation", ["lipswish", "tanh"])
def test_mlp_forward_matches_official_mlpsmall(activation):
    net = _deterministic_net(activation)
    assert [tuple(W.shape[1:]) for W in net.weights] == [(3, 4), (4, 4), (4, 4), (4, 2)]
    with torch.no_grad():
        got = [net(t, torch.tensor([[x]], dtype=torch.float32))[0, 0].tolist() for t, x in POINTS]
    np.testing.assert_allclose(got, MLP_OFFICIAL[activation], rtol=1e-5, atol=1e-7)


def test_init_is_truncated_kaiming_like_flax():
    net = EnsembleMLP([0], 400, [400, 400])
    w = net.weights[1][0].detach()
    scale = math.sqrt(2.0 / 400)
    assert abs(float(w.std()) / scale - INIT_STD_OVER_KAIMING) < 0.01  # two independent draws of 160k values
    assert float(w.abs().max()) / scale <= 2.0 / 0.87962566103423978 + 1e-6
    assert float(w.abs().max()) / scale == pytest.approx(INIT_MAX_OVER_KAIMING, abs=2e-3)
    assert all(float(b.abs().max()) == 0.0 for b in net.biases)
    n_params = sum(p[0].numel() for p in EnsembleMLP([0], 2, [32, 32, 32]).parameters())
    assert n_params == N_PARAMS_CELL


def test_backward_filter_and_G_match_official_uLM():
    problem = _cell_problem()
    for k, h in H_DIAG.items():
        np.testing.assert_allclose(problem.filt.H[k].numpy(), h * np.eye(2), rtol=2e-5, atol=1e-6)
        np.testing.assert_allclose(problem.filt.F[k].numpy(), F[k], rtol=2e-5)
    for (k, x), g, r in zip(GUIDED_POINTS, G, R_TILDE):
        _, r_ours, g_ours = guided_terms(problem, k, problem.tl[k], torch.tensor(x))
        np.testing.assert_allclose(r_ours.numpy(), r, rtol=2e-5)
        # G at t = 0 is a cancellation (official 2.6e-7 in float32): absolute tolerance there
        assert float(g_ours) == pytest.approx(g, rel=2e-5, abs=1e-5)


def test_neural_bridge_loss_matches_official_on_fixed_noise():
    problem = _cell_problem()
    net = _deterministic_net("lipswish")
    dts = torch.tensor(problem.dts, dtype=torch.float32)
    dW = torch.stack([torch.from_numpy(_noise(b)) * dts.sqrt()[:, None] for b in range(3)])[None]
    with torch.no_grad():
        loss = neural_bridge_loss(problem, net, dW)[0]
        path, _, _ = simulate_bridge(problem, dW, net)
    np.testing.assert_allclose(loss.numpy(), LOSS_PER_PATH, rtol=1e-5)
    np.testing.assert_allclose(path[0, 0, 50].numpy(), PATH0_MID, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(path[0, 0, 100].numpy(), PATH0_END, rtol=1e-5, atol=1e-6)
