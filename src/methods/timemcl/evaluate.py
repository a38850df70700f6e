"""Turn a trained forecaster into (hypotheses, weights) and score them (paper Sec. 5 metrics).

kind "timemcl" (either TimeMCL class: the autoregressive real-data model or the one-shot toy
model, both map contexts to (hyps, score_logits)): its K hypotheses weighted by
sigmoid(score) / sum_k sigmoid(score_k) (the authors' normalisation of the score heads; for the
autoregressive model sigmoid(score) is the time-averaged per-step probability); "deepar":
n_samples ancestral samples, weights 1/n; "seasonal_naive": one trajectory, weight 1.
Contexts are (N, L + C, D): max(lags) steps of history before the C unrolled ones.
"""
from __future__ import annotations

import time

import numpy as np
import torch

from . import metrics
from .model import DeepARGaussian, TimeMCL, TimeMCLOneShot, count_parameters, seasonal_naive

FORECASTERS = ("timemcl", "deepar", "seasonal_naive")


def score_weights(score_logits: torch.Tensor) -> torch.Tensor:
    """Score heads -> mixture weights: sigmoid, normalised over hypotheses. (B, K) -> (B, K)."""
    p = torch.sigmoid(score_logits)
    return p / p.sum(dim=1, keepdim=True)


def _naive_horizon(model, horizon: int | None, season: int | None) -> int:
    """Horizon for seasonal naive: the explicit one, else the one of the ModelConfig / model passed as `model`."""
    if horizon is None:
        horizon = getattr(model, "horizon", None) or getattr(getattr(model, "cfg", None), "horizon", None)
    if season is None or horizon is None:
        raise ValueError(f"seasonal_naive needs season and horizon (got season={season}, horizon={horizon}); "
                         "pass horizon=... or a ModelConfig as model")
    return int(horizon)


@torch.no_grad()
def predict(kind: str, model, contexts: torch.Tensor, n_samples: int | None = None, season: int | None = None,
            horizon: int | None = None, seed: int = 0, chunk: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """contexts (N, L + C, D) -> hyps (N, K, H, D), weights (N, K), numpy float32. Runs the model in eval mode.

    timemcl: K = model's n_hypotheses (n_samples is ignored); deepar: K = n_samples, sampled with a
    torch.Generator seeded by `seed`; seasonal_naive: needs `season`, and `horizon` or a `model`
    that carries one (a ModelConfig, or a model with .cfg.horizon).
    """
    if kind not in FORECASTERS:
        raise ValueError(f"kind={kind!r} unknown; allowed values: {', '.join(FORECASTERS)}")
    expected = {"timemcl": (TimeMCL, TimeMCLOneShot), "deepar": (DeepARGaussian,)}.get(kind)
    if expected is not None and not isinstance(model, expected):
        raise TypeError(f"predict: kind={kind!r} needs a {' or '.join(c.__name__ for c in expected)}, "
                        f"got {type(model).__name__}")
    if expected is not None:
        model.eval()  # no dropout at inference
    contexts = torch.as_tensor(contexts, dtype=torch.float32)
    gen = torch.Generator().manual_seed(seed)
    hyps, weights = [], []
    for part in contexts.split(chunk):
        if kind == "timemcl":
            h, logits = model(part)
            w = score_weights(logits)
        elif kind == "deepar":
            assert n_samples is not None and n_samples >= 1, "deepar needs n_samples >= 1"
            h = model.sample(part, n_samples, generator=gen)
            w = torch.full(h.shape[:2], 1.0 / n_samples)
        else:
            h = seasonal_naive(part, _naive_horizon(model, horizon, season), season)
            w = torch.ones(h.shape[:2])
        hyps.append(h)
        weights.append(w)
    return torch.cat(hyps).numpy(), torch.cat(weights).numpy()


def evaluate_forecaster(kind: str, model, contexts: torch.Tensor, targets: torch.Tensor, n_samples: int | None = None,
                        season: int | None = None, seed: int = 0) -> dict:
    """Distortion, CRPS-sum, marginal CRPS, mixture RMSE, total variation of the trajectories, inference
    time per window, parameter count.

    For timemcl also `collapsed_heads`: heads that are the best hypothesis on none of these windows
    (and `win_counts`, how often each head wins).
    """
    targets_np = np.asarray(targets, dtype=np.float32)
    start = time.perf_counter()
    hyps, weights = predict(kind, model, contexts, n_samples, season, horizon=targets_np.shape[1], seed=seed)
    seconds = time.perf_counter() - start
    out = {
        "distortion": metrics.distortion(hyps, targets_np),
        "crps_sum": metrics.weighted_crps_sum(hyps, weights, targets_np),
        "crps": metrics.weighted_crps(hyps, weights, targets_np),
        "mixture_rmse": metrics.mixture_rmse(hyps, weights, targets_np),
        "total_variation": metrics.total_variation(hyps),
        "inference_seconds": seconds / len(targets_np),
        "n_parameters": count_parameters(model) if kind != "seasonal_naive" else 0,
        "n_hypotheses": int(hyps.shape[1]),
        "n_windows": int(len(targets_np)),
    }
    if kind == "timemcl":
        counts = np.bincount(metrics.winners(hyps, targets_np), minlength=hyps.shape[1])
        out["win_counts"] = counts.tolist()
        out["collapsed_heads"] = int((counts == 0).sum())
    return out
