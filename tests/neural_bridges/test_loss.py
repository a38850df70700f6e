"""The variational loss: its minimum log p~ - log p in the linear (OU) case, and the guided
proposal's importance-sampling identity."""

import torch

from methods.neural_bridges.baselines import log_mean_exp
from methods.neural_bridges.bridges import (
    BridgeProblem,
    evaluate_loss,
    guided_terms,
    increments_per_seed,
    sample_bridge,
)
from methods.neural_bridges.experiments import optimal_theta
from methods.neural_bridges.sde import driftless_auxiliary, linear_log_density, ornstein_uhlenbeck

G, MU, S, T, EPS = 1.7, 1.0, 0.3, 1.0, 1e-3


def _ou_problem(n_steps):
    diff = ornstein_uhlenbeck(G, MU, S)
    x0 = torch.tensor([0.0], dtype=torch.float64)
    v = torch.tensor([1.0], dtype=torch.float64)
    return BridgeProblem(diff, driftless_auxiliary(diff.sigma), x0, v, T, n_steps, EPS)


def _bound(problem):
    return problem.log_ptilde() - linear_log_density(-G, G * MU, S, T, 0.0, 1.0, EPS)


def _log_ratio(problem, theta, n, gen):
    """Per path: sum 1/2|theta|^2 dt + sum theta dW - sum G dt = log dQ/dP° - int G, which for the
    optimal theta is the constant log p~ - log p (dQ = dP*)."""
    dW = increments_per_seed([gen], n, problem)[0].double()
    x = problem.x0.double().expand(n, 1)
    out = torch.zeros(n, dtype=torch.float64)
    for k, dt in enumerate(problem.dts):
        t = problem.tl[k]
        f, r, Gk = guided_terms(problem, k, t, x.float())
        th = theta(t, x) if theta is not None else torch.zeros_like(x)
        out += 0.5 * (th * th).sum(-1) * dt + (th * dW[:, k]).sum(-1) - Gk.double() * dt
        x = x + (f.double() + r.double() * S * S + S * th) * dt + S * dW[:, k]
    return out


def test_optimal_loss_equals_bound():
    problem = _ou_problem(400)
    theta = optimal_theta(problem, (-G, G * MU, S))
    gen = torch.Generator().manual_seed(0)
    loss, se = evaluate_loss(problem, theta, 4000, [gen])
    bound = _bound(problem)
    assert abs(loss[0] - bound) < 4 * se[0] + 0.03, (loss, se, bound)
    # path by path the log density ratio is (nearly) constant at the optimum, not for theta = 0
    lr_opt = _log_ratio(problem, theta, 2000, torch.Generator().manual_seed(1))
    lr_zero = _log_ratio(problem, None, 2000, torch.Generator().manual_seed(1))
    assert abs(float(lr_opt.mean()) - bound) < 0.05
    assert float(lr_opt.std()) < 0.15 < float(lr_zero.std())


def test_guided_loss_above_bound_and_importance_identity():
    problem = _ou_problem(200)
    gen = torch.Generator().manual_seed(2)
    bound = _bound(problem)
    loss, se = evaluate_loss(problem, None, 4000, [gen])
    assert loss[0] - bound > 0.5  # KL of the guided proposal (the BM auxiliary misses the OU drift)
    _, ll = sample_bridge(problem, None, 20000, [torch.Generator().manual_seed(3)])
    # E[exp(int G dt)] = p / p~
    assert abs(float(log_mean_exp(ll)[0]) + bound) < 0.05
