"""TimeMCL training objectives: WTA, relaxed WTA, annealed WTA, and the score loss.

Shapes: B windows, K hypotheses, T steps the loss is over, D series dimensions.
pred (B, K, T, D), target (B, T, D), err (B, K), score_logits (B, K).
For TimeMCL on real data T = C + H (the teacher-forced context and horizon); for the one-shot
toy model T = H.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

WTA_KINDS = ("wta", "relaxed", "annealed")


def _check_kind(kind: str) -> None:
    if kind not in WTA_KINDS:
        raise ValueError(f"kind={kind!r} is not a known WTA variant; allowed values: {', '.join(WTA_KINDS)}")


def hypothesis_errors(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Per-hypothesis cost ell(f_k, y) (paper Sec. 3): mean over time of the squared error summed over dims.

    As in the authors' tMCL loss (mean scaler branch): sum_d (pred - target)^2 per step, then the
    mean over steps; so the annealing temperature T means what it means in the paper.
    """
    assert pred.dim() == 4 and target.dim() == 3, (
        f"expected pred (B,K,T,D) and target (B,T,D), got {tuple(pred.shape)}, {tuple(target.shape)}"
    )
    assert pred.shape[0] == target.shape[0] and pred.shape[2:] == target.shape[1:], (
        f"pred {tuple(pred.shape)} and target {tuple(target.shape)} disagree on B, T or D"
    )
    return (pred - target.unsqueeze(1)).pow(2).sum(dim=3).mean(dim=2)  # (B, K)


def wta_weights(err: torch.Tensor, kind: str, eps: float = 0.05, temperature: float = 0.0) -> torch.Tensor:
    """Per-hypothesis weights of the (relaxed / annealed) WTA loss, detached (paper Sec. 3.2 and App. on variants).

    - "wta": one-hot on the winner argmin_k err_k (Eq. of the WTA loss, Guzman-Rivera et al. 2012).
    - "relaxed": winner 1 - eps, every other hypothesis eps / (K - 1) (Rupprecht et al. 2017).
      The authors write it as (1 - eps K/(K-1)) * err_winner + eps/(K-1) * sum_k err_k;
      the sum includes the winner, so its total weight is 1 - eps: the same weights.
      With K = 1 the single hypothesis gets weight 1.
    - "annealed": softmax(-err / T) over hypotheses (aMCL, Perera et al. 2024); T <= 0 is pure WTA.
    All rows sum to 1.
    """
    _check_kind(kind)
    err = err.detach()
    B, K = err.shape
    winner = F.one_hot(err.argmin(dim=1), num_classes=K).to(err.dtype)  # (B, K)
    if kind == "wta" or K == 1:
        return winner
    if kind == "relaxed":
        assert 0.0 <= eps <= 1.0, f"eps must lie in [0, 1], got {eps}"
        return winner * (1.0 - eps) + (1.0 - winner) * (eps / (K - 1))
    if temperature <= 0.0:
        return winner
    return torch.softmax(-err / temperature, dim=1)


def mcl_loss(
    err: torch.Tensor, kind: str, eps: float = 0.05, temperature: float = 0.0, annealed_mean_over_k: bool = True
) -> torch.Tensor:
    """sum_k w_k err_k averaged over the batch, w from `wta_weights` (paper Sec. 3.2, the WTA objective).

    The authors' annealed branch (temperature > 0) averages over K as well as B, i.e. (1/K) sum_k w_k err_k:
    that is the default here; annealed_mean_over_k=False sums over K like the other variants (one scale
    for all three, annealed -> WTA continuously as T -> 0).
    """
    w = wta_weights(err, kind, eps, temperature)  # (B, K), no gradient
    per_window = (w * err).sum(dim=1)
    if kind == "annealed" and temperature > 0.0 and annealed_mean_over_k:
        per_window = per_window / err.shape[1]
    return per_window.mean()


def score_loss(score_logits: torch.Tensor, err: torch.Tensor) -> torch.Tensor:
    """Binary cross-entropy of each score head against 'this head won' (paper Sec. 3.2, the scoring loss).

    Target is the one-hot argmin_k err_k; mean over B and K like torch's BCELoss in the authors' code.
    For the autoregressive TimeMCL the logits are logit(mean_t sigmoid(per-step score)), so this is
    the BCE of the time-averaged probability, as in the authors' code.
    """
    assert score_logits.shape == err.shape, f"score_logits {tuple(score_logits.shape)} vs err {tuple(err.shape)}"
    winner = F.one_hot(err.detach().argmin(dim=1), num_classes=err.shape[1]).to(score_logits.dtype)
    return F.binary_cross_entropy_with_logits(score_logits, winner)


def annealing_temperature(step: int, total_steps: int, t0: float = 10.0, t_end: float = 5e-4) -> float:
    """Temperature of annealed WTA at `step`: geometric decay t0 -> t_end over `total_steps`, then 0 (pure WTA).

    The authors decay T_e = T_0 * 0.95**epoch and switch to plain WTA once T drops
    below 5e-4 (their config: temperature_ini=10, temperature_decay=0.95,
    temperature_lim=5e-4, wta_after_temperature_lim=True). Here the same geometric
    shape is parameterised by its endpoints and counted in optimiser steps:
    T(s) = t0 * (t_end / t0) ** (s / total_steps) for s < total_steps, else 0.
    Theirs reaches 5e-4 after log(5e-5) / log(0.95) = 193.1 epochs, i.e. at epoch 194 of their
    200: total_steps = 0.97 of the training steps (TrainConfig.anneal_fraction) matches it.
    """
    assert t0 > 0 and t_end > 0, f"t0 and t_end must be positive, got {t0}, {t_end}"
    if total_steps <= 0 or step >= total_steps:
        return 0.0
    return float(t0 * math.exp(math.log(t_end / t0) * step / total_steps))
