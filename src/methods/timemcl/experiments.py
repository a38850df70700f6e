"""The synthetic experiments' DAG steps: the toy processes with a known optimal quantizer (timemcl_toy, one
seed group per job) and the authors' Brownian toy (timemcl_official_toy)."""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from methods.common.io import atomic_path, log, set_seed, write_json

from . import metrics, official_toy, toy
from .evaluate import predict
from .model import ModelConfig, TimeMCLOneShot
from .train import TrainConfig, train_deepar, train_timemcl


def _toy_paths(process: str, n: int, toy_cfg: dict, gen: torch.Generator) -> torch.Tensor:
    sampler = toy.TOY_PROCESSES[process]
    if process == "ar":
        return sampler(
            n, toy_cfg["n_steps"], coeffs=toy_cfg["ar_coeffs"], noise_std=toy_cfg["ar_noise_std"], generator=gen
        )
    return sampler(n, toy_cfg["n_steps"], generator=gen)


def run_toy(
    process: str,
    seed: int,
    toy_cfg: dict,
    model_params: dict,
    train_params: dict,
    variants: list[str],
    device: torch.device | None = None,
    primary: str | None = None,
) -> tuple[dict, dict]:
    """Train every variant (one-shot TimeMCL heads, as in the paper's toy code) and DeepAR on simulated
    paths of one seed; compare with the optimal conditional quantizer. Returns (metrics, the first test
    path's heads for the figure).

    With `primary` (the claims' primary variant) also the claims' nulls: "k1", the primary variant trained
    with K = 1 (same loss, steps, batch and seed: the multiple hypotheses removed), "untrained", the
    primary variant's network at the initialisation its training starts from, and "naive", the last
    observed value repeated over the horizon (one trajectory: K copies of it score the same).

    For each test path the distortion of a forecaster (min over its K trajectories of the RMSE,
    averaged) is measured against fresh draws of the true conditional future, and so is that of
    the reference quantizer (Lloyd on a separate set of draws): their ratio is >= 1 up to noise.
    """
    set_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    n_steps, K = toy_cfg["n_steps"], toy_cfg["n_hypotheses"]
    P = int(round(toy_cfg["t0"] * (n_steps - 1))) + 1  # grid points observed, t_0 included
    paths = _toy_paths(process, toy_cfg["n_train"], toy_cfg, gen)
    ctx, tgt = paths[:, :P], paths[:, P:]
    assert P >= 2, f"toy: t0={toy_cfg['t0']} leaves {P} observed grid point(s); need >= 2"
    # the P observed points are lag 1 + P - 1 unrolled steps (DeepAR predicts points 1 .. n_steps - 1)
    model_cfg = ModelConfig(
        dim=1, context_length=P - 1, horizon=n_steps - P, n_hypotheses=K, lags=(1,), scaling=False, **model_params
    )
    train_params = {**train_params, "steps": toy_cfg["steps"], "eps": toy_cfg["eps"]}
    models = {}
    for v in variants:
        tc = TrainConfig.from_dict({**train_params, "loss": v, "seed": seed})
        models[v], _ = train_timemcl(ctx, tgt, model_cfg, tc, kind="timemcl_oneshot", device=device)
    models["deepar"], _ = train_deepar(
        ctx, tgt, model_cfg, TrainConfig.from_dict({**train_params, "seed": seed}), device=device
    )
    if primary is not None:
        tc = TrainConfig.from_dict({**train_params, "loss": primary, "seed": seed})
        single_cfg = dataclasses.replace(model_cfg, n_hypotheses=1)
        models["k1"], _ = train_timemcl(ctx, tgt, single_cfg, tc, kind="timemcl_oneshot", device=device)
        torch.manual_seed(seed)  # train._setup's seeding right before it builds the model
        models["untrained"] = TimeMCLOneShot(model_cfg).eval()

    test = _toy_paths(process, toy_cfg["n_test"], toy_cfg, gen)[:, :P]
    kw = dict(coeffs=toy_cfg["ar_coeffs"], noise_std=toy_cfg["ar_noise_std"]) if process == "ar" else {}
    forecasts = {v: predict("timemcl", models[v], test, device=device)[0] for v in variants}
    forecasts["deepar"] = predict("deepar", models["deepar"], test, n_samples=K, seed=seed, device=device)[0]
    if primary is not None:
        for name in ("k1", "untrained"):
            forecasts[name] = predict("timemcl", models[name], test, device=device)[0]
        forecasts["naive"] = test[:, -1:, None, :].expand(-1, 1, n_steps - P, -1).numpy()  # (N, 1, H, 1)
    per_path = {name: [] for name in [*forecasts, "reference"]}
    references = []
    for i in range(len(test)):
        fit = toy.conditional_samples(process, test[i, :, 0], toy_cfg["n_reference"], n_steps, gen, **kw).numpy()
        held_out = toy.conditional_samples(process, test[i, :, 0], toy_cfg["n_reference"], n_steps, gen, **kw).numpy()
        centers, _ = toy.lloyd_quantizer(fit, K, seed=seed)
        references.append(centers)
        futures = held_out[:, None, :, None]  # (M, 1, H, 1): every draw against the same K trajectories
        for name, hyps in forecasts.items():
            per_path[name].append(metrics.distortion(np.repeat(hyps[i : i + 1], len(futures), 0), futures[:, 0]))
        per_path["reference"].append(
            metrics.distortion(np.repeat(centers[None, :, :, None], len(futures), 0), futures[:, 0])
        )
    result = {name: float(np.mean(v)) for name, v in per_path.items()}
    result["ratio_to_reference"] = {name: result[name] / result["reference"] for name in forecasts}
    log(f"{process} seed {seed}: " + ", ".join(f"{k} {v:.4f}" for k, v in result.items() if k != "ratio_to_reference"))
    heads = dict(
        t=toy.time_grid(n_steps),
        past=test[0, :, 0].numpy(),
        reference=references[0],
        deepar=forecasts["deepar"][0, :, :, 0],
        **{f"heads_{v}": forecasts[v][0, :, :, 0] for v in variants},
    )
    return {"process": process, "seed": seed, "K": K, "distortion": result}, heads


def toy_job(
    process: str,
    seeds: list[int],
    toy_cfg: dict,
    model_params: dict,
    train_params: dict,
    variants: list[str],
    out_json: str,
    out_npz: str,
    threads: int = 1,
    device: torch.device | None = None,
    primary: str | None = None,
) -> None:
    """Step timemcl_toy: one synthetic process for one seed group (`{seeds}` wildcard); writes
    {"process", "seeds", "runs": [one per seed]} and the heads of the group's first seed (the figure's)."""
    torch.set_num_threads(threads)
    runs, first_heads = [], None
    for seed in seeds:
        doc, heads = run_toy(process, int(seed), toy_cfg, model_params, train_params, variants, device, primary)
        runs.append(doc)
        first_heads = heads if first_heads is None else first_heads
    write_json(out_json, {"process": process, "seeds": [int(s) for s in seeds], "runs": runs})
    with atomic_path(out_npz) as tmp, open(tmp, "wb") as f:
        np.savez(f, seed=int(seeds[0]), **first_heads)


def run_official_toy(cfg: dict, seeds: list[int], out_json: str, threads: int = 1) -> None:
    """Step timemcl_official_toy: the authors' Brownian toy (official_toy.py) for every seed: distortion vs
    the k-means quantizer, head win rates, scores vs Voronoi masses (Prop. 5.2). One CPU job for all seeds:
    its MLP (width 200, 500 steps) is small at the official settings too; the figure is its own step."""
    torch.set_num_threads(threads)
    docs = []
    for seed in seeds:
        set_seed(seed)
        model, losses = official_toy.train_toy(cfg, seed)
        doc = official_toy.evaluate_toy(model, cfg, seed)
        doc["final_loss"] = losses[-1]
        # the claims' null: the same network at its initialisation (train_toy's first draws), untrained
        untrained = official_toy.evaluate_toy(official_toy.untrained_toy(cfg, seed), cfg, seed)
        doc["untrained"] = {k: untrained[k] for k in ("distortion_ratio", "min_win_rate", "score_mass_gap_mean")}
        # the mechanism ablation of the win-rate claim: plain WTA (eps = 0), the same steps, batches and seed
        wta, _ = official_toy.train_toy({**cfg, "eps": 0.0}, seed)
        wins = official_toy.win_rates(wta, cfg, seed)
        doc["wta"] = {"win_rates": wins.tolist(), "min_win_rate": float(wins.min()), "steps": cfg["steps"]}
        log(
            f"official toy seed {seed}: distortion {doc['distortion_timemcl']:.5f} vs quantizer "
            f"{doc['distortion_quantizer']:.5f} (ratio {doc['distortion_ratio']:.3f}), min win rate "
            f"{doc['min_win_rate']:.3f}, score-mass gap {doc['score_mass_gap_mean']:.3f}"
        )
        docs.append(doc)
    write_json(out_json, {"config": cfg, "seeds": docs})
