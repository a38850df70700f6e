"""Samplers of q_alpha and the sequential multi-measurement sampler ((S1), (S2), (MM) of the package docstring).

A denoiser is a function h -> E[x | h] with h = alpha * (sum of the measurements so far). When
sampling the k-th measurement y given the sum s of the previous ones (s = 0 for k = 1), the score
of log q(y | s) in y is alpha * E[x | alpha (s + y)].
"""

from __future__ import annotations

import torch


def _bernoulli_pm(logit_plus: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
    """Independent +-1 draws with P(+1) = sigmoid(logit_plus)."""
    draw = torch.rand(logit_plus.shape, generator=generator) < torch.sigmoid(logit_plus)
    return torch.where(draw, 1.0, -1.0).to(logit_plus.dtype)


def langevin_logits(y: torch.Tensor, mean: torch.Tensor, alpha: float, eta: float) -> torch.Tensor:
    """(S1) proposal logits of P(y'_i = +1) = sigmoid(alpha m_i + 2 y_i / eta)."""
    return alpha * mean + 2 * y / eta


def langevin_log_prob(
    y: torch.Tensor, y_new: torch.Tensor, denoiser, alpha: float, eta: float, s: torch.Tensor
) -> torch.Tensor:
    """log of the (S1) proposal probability of y_new from y (both (B, d)), given the sum s of earlier measurements."""
    logits = langevin_logits(y, denoiser(alpha * (s + y)), alpha, eta)
    return torch.nn.functional.logsigmoid(y_new * logits).sum(1)


def langevin_step(
    y: torch.Tensor,
    denoiser,
    alpha: float,
    eta: float,
    s: torch.Tensor | None = None,
    log_target=None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """One step of the Langevin-like sampler (S1) for y | s; Metropolis-Hastings corrected when
    `log_target` (y -> log q(y | s) up to a constant) is given, unadjusted otherwise."""
    s = torch.zeros_like(y) if s is None else s
    y_new = _bernoulli_pm(langevin_logits(y, denoiser(alpha * (s + y)), alpha, eta), generator)
    if log_target is None:
        return y_new
    log_acc = (
        log_target(y_new)
        - log_target(y)
        + langevin_log_prob(y_new, y, denoiser, alpha, eta, s)
        - langevin_log_prob(y, y_new, denoiser, alpha, eta, s)
    )
    accept = torch.log(torch.rand(len(y), generator=generator)) < log_acc
    return torch.where(accept[:, None], y_new, y)


def mean_field_two_stage_mean(y: torch.Tensor, alpha: float, denoiser, s: torch.Tensor) -> torch.Tensor:
    """E[y'_i | y] of (S2) with the product approximation of p(x | h): tanh(alpha) * m_i(h)."""
    return float(torch.tanh(torch.tensor(alpha))) * denoiser(alpha * (s + y))


def two_stage_step(
    y: torch.Tensor,
    alpha: float,
    s: torch.Tensor | None = None,
    denoiser=None,
    posterior_sampler=None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """(S2): x ~ p(x | alpha (s + y)) -- exactly with `posterior_sampler`, else as independent bits
    with means denoiser(h) -- then a fresh measurement y' ~ p(y' | x) of (N)."""
    s = torch.zeros_like(y) if s is None else s
    h = alpha * (s + y)
    if posterior_sampler is not None:
        x = posterior_sampler(h)
    else:
        x = _bernoulli_pm(2 * torch.atanh(denoiser(h).clamp(-1 + 1e-6, 1 - 1e-6)), generator)
    keep = torch.rand(y.shape, generator=generator) < (1 + torch.tanh(torch.tensor(alpha))) / 2
    return torch.where(keep, x, -x)


def multi_measurement(
    n: int, d: int, alpha: float, m: int, steps_per_measurement: int, step_fn, denoiser, generator: torch.Generator
) -> dict[int, torch.Tensor]:
    """(MM): sample y_1 ~ q_alpha, then y_k ~ q(y_k | y_1..y_{k-1}) for k = 2..m, each by
    `steps_per_measurement` steps of step_fn(y, s) started from the previous measurement (y_1 from
    uniform bits). Returns {k: sign(E[x | alpha (y_1 + .. + y_k)])} for k = 1..m."""
    s = torch.zeros(n, d)
    y = torch.where(torch.rand((n, d), generator=generator) < 0.5, 1.0, -1.0)
    out = {}
    for k in range(1, m + 1):
        for _ in range(steps_per_measurement):
            y = step_fn(y, s)
        s = s + y
        mean = denoiser(alpha * s)
        out[k] = torch.where(mean >= 0, 1.0, -1.0)
    return out
