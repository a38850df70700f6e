"""Turn a trained forecaster into (hypotheses, weights) and score them (paper Sec. 5 metrics).

kind "timemcl" (either TimeMCL class: the autoregressive real-data model or the one-shot toy
model, both map contexts to (hyps, score_logits)): its K hypotheses weighted by
sigmoid(score) / sum_k sigmoid(score_k) (the authors' normalisation of the score heads; for the
autoregressive model sigmoid(score) is the time-averaged per-step probability); "deepar":
n_samples ancestral samples, weights 1/n; "seasonal_naive": one trajectory, weight 1; "constant": one
trajectory at a fixed level per dimension (the `model` argument: the training-mean level), weight 1. One
trajectory of weight 1 scores exactly as K copies of it with weights 1/K (distortion, CRPS, total variation).
Contexts are (N, L + C, D): max(lags) steps of history before the C unrolled ones. Models run on the
`device` the caller passes (the DAG step: the job's); forecasts come back as numpy arrays.
`evaluate_models` is the DAG step (timemcl_evaluate): every model of one seed group on the test windows.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import torch

from methods.common.io import log, read_json, write_json

from . import metrics
from .data import load_windows
from .model import DeepARGaussian, TimeMCL, TimeMCLOneShot, count_parameters, seasonal_naive
from .train import load_group

FORECASTERS = ("timemcl", "deepar", "seasonal_naive", "constant")


def score_weights(score_logits: torch.Tensor) -> torch.Tensor:
    """Score heads -> mixture weights: sigmoid, normalised over hypotheses. (B, K) -> (B, K)."""
    p = torch.sigmoid(score_logits)
    return p / p.sum(dim=1, keepdim=True)


def _naive_horizon(model, horizon: int | None, season: int | None) -> int:
    """Horizon for seasonal naive: the explicit one, else the one of the ModelConfig / model passed as `model`."""
    if horizon is None:
        horizon = getattr(model, "horizon", None) or getattr(getattr(model, "cfg", None), "horizon", None)
    if season is None or horizon is None:
        raise ValueError(
            f"seasonal_naive needs season and horizon (got season={season}, horizon={horizon}); "
            "pass horizon=... or a ModelConfig as model"
        )
    return int(horizon)


@torch.no_grad()
def predict(
    kind: str,
    model,
    contexts: torch.Tensor,
    n_samples: int | None = None,
    season: int | None = None,
    horizon: int | None = None,
    seed: int = 0,
    chunk: int = 1024,
    device: torch.device | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """contexts (N, L + C, D) -> hyps (N, K, H, D), weights (N, K), numpy float32. Runs the model in eval mode
    on `device` (default: the CPU; the model is moved there).

    timemcl: K = model's n_hypotheses (n_samples is ignored); deepar: K = n_samples, sampled with a
    (CPU) torch.Generator seeded by `seed`; seasonal_naive: needs `season`, and `horizon` or a `model`
    that carries one (a ModelConfig, or a model with .cfg.horizon).
    """
    if kind not in FORECASTERS:
        raise ValueError(f"kind={kind!r} unknown; allowed values: {', '.join(FORECASTERS)}")
    expected = {"timemcl": (TimeMCL, TimeMCLOneShot), "deepar": (DeepARGaussian,)}.get(kind)
    if expected is not None and not isinstance(model, expected):
        raise TypeError(
            f"predict: kind={kind!r} needs a {' or '.join(c.__name__ for c in expected)}, got {type(model).__name__}"
        )
    device = device or torch.device("cpu")
    if expected is not None:
        model.eval().to(device)  # no dropout at inference
    contexts = torch.as_tensor(contexts, dtype=torch.float32)
    gen = torch.Generator().manual_seed(seed)
    hyps, weights = [], []
    for part in contexts.split(chunk):
        if kind == "timemcl":
            h, logits = model(part.to(device))
            h, w = h.cpu(), score_weights(logits).cpu()
        elif kind == "deepar":
            assert n_samples is not None and n_samples >= 1, "deepar needs n_samples >= 1"
            h = model.sample(part.to(device), n_samples, generator=gen).cpu()
            w = torch.full(h.shape[:2], 1.0 / n_samples)
        elif kind == "seasonal_naive":
            h = seasonal_naive(part, _naive_horizon(model, horizon, season), season)
            w = torch.ones(h.shape[:2])
        else:
            assert horizon is not None, "constant needs the horizon"
            level = torch.as_tensor(model, dtype=torch.float32).reshape(1, 1, 1, -1)
            h = level.expand(len(part), 1, int(horizon), level.shape[-1]).clone()
            w = torch.ones(h.shape[:2])
        hyps.append(h)
        weights.append(w)
    return torch.cat(hyps).numpy(), torch.cat(weights).numpy()


def evaluate_forecaster(
    kind: str,
    model,
    contexts: torch.Tensor,
    targets: torch.Tensor,
    n_samples: int | None = None,
    season: int | None = None,
    seed: int = 0,
    device: torch.device | None = None,
) -> dict:
    """Distortion, CRPS-sum, marginal CRPS, mixture RMSE, total variation of the trajectories, inference
    time per window, parameter count.

    For timemcl also `collapsed_heads`: heads that are the best hypothesis on none of these windows
    (and `win_counts`, how often each head wins).
    """
    targets_np = np.asarray(targets, dtype=np.float32)
    start = time.perf_counter()
    hyps, weights = predict(
        kind, model, contexts, n_samples, season, horizon=targets_np.shape[1], seed=seed, device=device
    )
    seconds = time.perf_counter() - start
    out = {
        "distortion": metrics.distortion(hyps, targets_np),
        "crps_sum": metrics.weighted_crps_sum(hyps, weights, targets_np),
        "crps": metrics.weighted_crps(hyps, weights, targets_np),
        "mixture_rmse": metrics.mixture_rmse(hyps, weights, targets_np),
        "total_variation": metrics.total_variation(hyps),
        "inference_seconds": seconds / len(targets_np),
        "n_parameters": count_parameters(model) if kind in ("timemcl", "deepar") else 0,
        "n_hypotheses": int(hyps.shape[1]),
        "n_windows": int(len(targets_np)),
    }
    if kind == "timemcl":
        counts = np.bincount(metrics.winners(hyps, targets_np), minlength=hyps.shape[1])
        out["win_counts"] = counts.tolist()
        out["collapsed_heads"] = int((counts == 0).sum())
    return out


# --- the DAG step: every model of one seed group on the test windows ----------------------------


def untrained_like(model: TimeMCL, seed: int) -> TimeMCL:
    """The claims' "untrained" null: a TimeMCL of the same configuration at the initialisation its training
    started from (train._setup seeds torch with the training seed right before building the model)."""
    torch.manual_seed(seed)
    return type(model)(dataclasses.replace(model.cfg)).eval()


def training_mean(targets: torch.Tensor) -> np.ndarray:
    """The "train_mean" null's level: the mean of the training targets per dimension, (N, H, D) -> (D,)."""
    return np.asarray(targets, dtype=np.float64).reshape(-1, np.shape(targets)[-1]).mean(axis=0)


def other_rollout_metrics(model, ctx: torch.Tensor, tgt: torch.Tensor, device: torch.device | None = None) -> dict:
    """The same trained model evaluated with the other rollout rule (ModelConfig.carry_state flipped):
    the measured effect of the official sampling loop, which carries the LSTM state from one
    hypothesis' rollout into the next (README, where we differ from the official code)."""
    model.cfg.carry_state = not model.cfg.carry_state
    try:
        m = evaluate_forecaster("timemcl", model, ctx, tgt, device=device)
    finally:
        model.cfg.carry_state = not model.cfg.carry_state
    return {"carry_state": not model.cfg.carry_state, **{k: m[k] for k in ("distortion", "crps_sum", "crps")}}


def evaluate_seed(
    dataset: str,
    ctx: torch.Tensor,
    tgt: torch.Tensor,
    spec: dict,
    timemcl: dict,
    deepar,
    K: int,
    seed: int,
    histories: list[dict] = (),
    device: torch.device | None = None,
    primary: str | None = None,
    single=None,
    train_mean=None,
    single_histories: list[dict] = (),
) -> dict:
    """Metrics of every TimeMCL variant ({variant: model}), DeepAR (K samples) and seasonal naive on the test
    windows for one seed; `histories` (that seed's training histories) add each model's training time.

    The claims' nulls, when given: `single` ("k1", the primary variant trained with K = 1 hypothesis: the
    same backbone, loss and steps without the multiple hypotheses), `train_mean` ("train_mean", the
    training targets' mean per dimension as a constant forecast) and, with `primary`, "untrained" (the
    primary variant's network at the initialisation its training started from, `untrained_like`; measured
    with `single`, i.e. at the main K).
    The other rollout rule (`other_rollout_metrics`) is measured for the primary variant only (all of
    them when `primary` is None)."""
    results = {}
    for variant, model in timemcl.items():
        results[variant] = evaluate_forecaster("timemcl", model, ctx, tgt, device=device)
        if primary is None or variant == primary:
            results[variant]["other_rollout"] = other_rollout_metrics(model, ctx, tgt, device)
    results["deepar"] = evaluate_forecaster("deepar", deepar, ctx, tgt, n_samples=K, seed=seed, device=device)
    results["seasonal_naive"] = evaluate_forecaster("seasonal_naive", None, ctx, tgt, season=spec["season"])
    if single is not None:
        assert single.cfg.n_hypotheses == 1, f"the K = 1 null has {single.cfg.n_hypotheses} hypotheses"
        results["k1"] = evaluate_forecaster("timemcl", single, ctx, tgt, device=device)
    if train_mean is not None:
        results["train_mean"] = evaluate_forecaster("constant", train_mean, ctx, tgt)
    if single is not None and primary is not None:
        untrained = untrained_like(timemcl[primary], seed)
        results["untrained"] = evaluate_forecaster("timemcl", untrained, ctx, tgt, device=device)
    for hist in histories:
        results[hist["method"]]["train_seconds"] = hist["train_seconds"]
        results[hist["method"]]["train_steps"] = len(hist["loss"])
    for hist in single_histories:
        results["k1"]["train_seconds"] = hist["train_seconds"]
        results["k1"]["train_steps"] = len(hist["loss"])
    for name, m in results.items():
        log(
            f"seed {seed} {name:>15}: distortion {m['distortion']:.4g}  crps_sum {m['crps_sum']:.4g}  "
            f"rmse {m['mixture_rmse']:.4g}"
        )
    return {"dataset": dataset, "K": K, "seed": seed, "n_test_windows": len(tgt), "methods": results}


def evaluate_models(
    dataset: str,
    series_csv: str,
    spec: dict,
    timemcl_ckpts: dict[str, str],
    deepar_ckpt: str,
    K: int,
    seeds: list[int],
    out_json: str,
    histories: list[str] = (),
    threads: int = 1,
    device: torch.device | None = None,
    primary: str | None = None,
    single_ckpt: str | None = None,
    single_history: str | None = None,
) -> None:
    """Step timemcl_evaluate: one seed group's models ({variant: group checkpoint}, the DeepAR group
    checkpoint) on the test windows; writes {"dataset", "K", "seeds", "evaluations": [one per seed]}.

    At the main K the step also gets `single_ckpt` (the primary variant's K = 1 group checkpoint) and
    measures the claims' nulls (`evaluate_seed`: k1, untrained, train_mean)."""
    torch.set_num_threads(threads)
    windows = load_windows(series_csv, spec)
    ctx, tgt = windows["test"]
    variants = {v: load_group(path) for v, path in timemcl_ckpts.items()}
    deepar = load_group(deepar_ckpt)
    hists = [h for path in histories for h in read_json(path)["histories"]]
    single = load_group(single_ckpt) if single_ckpt else None
    single_hists = read_json(single_history)["histories"] if single_history else []
    level = training_mean(windows["train"][1]) if single_ckpt else None
    docs = []
    for seed in seeds:
        models = {v: group[int(seed)][1] for v, group in variants.items()}
        docs.append(
            evaluate_seed(
                dataset,
                ctx,
                tgt,
                spec,
                models,
                deepar[int(seed)][1],
                K,
                int(seed),
                [h for h in hists if h["seed"] == int(seed)],
                device,
                primary=primary,
                single=single[int(seed)][1] if single else None,
                train_mean=level,
                single_histories=[h for h in single_hists if h["seed"] == int(seed)],
            )
        )
    write_json(out_json, {"dataset": dataset, "K": K, "seeds": [int(s) for s in seeds], "evaluations": docs})
