"""What each DAG step of winwinlay does (one function per script in workflow/scripts/winwinlay/)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import load_torch, log, read_json, save_arrays, save_torch, write_json

from .canvas import corners_to_boxes, load_digit_images, render, sample_layouts
from .diffusion import alpha_bars, guided_sample, train_denoiser
from .energies import in_box_mass
from .evaluate import box_iou, detect, fit_pca, frechet_distance, train_detector
from .model import Denoiser
from .toy import box_metrics, toy_experiment

DECLARATION = Path(__file__).with_name("claims.yaml")
TOY_METRICS = ("mass", "coverage", "entropy", "centroid_offset")






def toy_job(seeds: list[int], cfg: dict, threads: int, out_json: str, out_npz: str) -> None:
    """Step winwinlay_toy (experiment 1): attention maps optimised directly under each energy."""
    torch.set_num_threads(threads)
    log(f"toy: seeds {seeds}, config {cfg}")
    per_seed, arrays = {}, {}
    for seed in seeds:
        metrics, examples = toy_experiment(seed, cfg)
        for k, v in metrics.items():
            per_seed.setdefault(k, []).append(v)
        if seed == seeds[0]:
            arrays = examples
        log(f"toy seed {seed}: " + ", ".join(f"{k}={v:.3f}" for k, v in metrics.items()))
    save_arrays(out_npz, arrays, dtype=np.float64)
    write_json(out_json, {"seeds": seeds, "config": cfg, **per_seed})


def train_job(data: dict, model_cfg: dict, detector_cfg: dict, seed: int, threads: int, out_ckpt: str,
              out_json: str) -> None:
    """Step winwinlay_train: the denoiser, the layout detector and the PCA features of the realism proxy."""
    torch.set_num_threads(threads)
    digits = load_digit_images(data["test_fraction"], data["split_seed"])
    log(f"digits: {len(digits['train_x'])} train, {len(digits['test_x'])} test; model {model_cfg}")
    model, losses = train_denoiser(digits, {**model_cfg, "side": data["side"], "n_objects": data["n_objects"]}, seed,
                                   log)
    rng = np.random.default_rng(seed + 1)
    detector = train_detector(digits, data["side"], data["n_objects"], detector_cfg["n_background"], seed)
    classes, corners = sample_layouts(detector_cfg["n_check"], data["side"], data["n_objects"], rng)
    real = render(digits["test_x"], digits["test_y"], classes, corners, data["side"], rng)
    found, _ = detect(detector, real, classes)
    detector_miou = float(box_iou(found, corners).mean())
    log(f"detector mIoU on held-out real canvases: {detector_miou:.3f}")
    classes, corners = sample_layouts(detector_cfg["n_pca_fit"], data["side"], data["n_objects"], rng)
    pca_mean, pca_dirs = fit_pca(render(digits["train_x"], digits["train_y"], classes, corners, data["side"], rng),
                                 detector_cfg["pca_components"])
    save_torch(out_ckpt, {"model": model.state_dict(), "model_args": {"channels": model_cfg["channels"],
                                                                      "token_dim": model_cfg["token_dim"]},
                          "detector": {k: torch.from_numpy(v) for k, v in detector.items()},
                          "pca_mean": torch.from_numpy(pca_mean), "pca_dirs": torch.from_numpy(pca_dirs),
                          "config": {"data": data, "model": model_cfg, "seed": seed}})
    write_json(out_json, {"final_loss": float(np.mean(losses[-50:])), "loss_curve": losses[:: max(len(losses) // 100, 1)],
                          "detector_miou_real": detector_miou})


def attention_coverage(maps: torch.Tensor, mask: torch.Tensor, boxes: torch.Tensor) -> dict[str, float]:
    """Mean over objects of the toy's box metrics applied to the model's maps at the end of guidance."""
    b, k, h, w = maps.shape
    m = box_metrics(maps.reshape(b * k, 1, h, w), mask.reshape(b * k, 1, h, w), boxes.reshape(b * k, 1, 4))
    return {key: float(np.mean(v)) for key, v in m.items()}


def guide_job(ckpt_path: str, data: dict, sampling: dict, methods: dict, seed: int, threads: int, out_json: str,
              out_npz: str) -> None:
    """Step winwinlay_guide: one sampling seed, every method on the same held-out layouts and initial noise."""
    torch.set_num_threads(threads)
    ckpt = load_torch(ckpt_path)
    model = Denoiser(**ckpt["model_args"])
    model.load_state_dict(ckpt["model"])
    model.eval().requires_grad_(False)
    detector = {k: v.numpy() for k, v in ckpt["detector"].items()}
    pca_mean, pca_dirs = ckpt["pca_mean"].numpy(), ckpt["pca_dirs"].numpy()
    digits = load_digit_images(data["test_fraction"], data["split_seed"])
    rng = np.random.default_rng(1000 + seed)
    classes, corners = sample_layouts(sampling["n_samples"], data["side"], data["n_objects"], rng)
    real = render(digits["test_x"], digits["test_y"], classes, corners, data["side"], rng)
    boxes = torch.from_numpy(corners_to_boxes(corners, data["side"]))
    abar = alpha_bars(ckpt["config"]["model"]["n_timesteps"], ckpt["config"]["model"]["beta_start"],
                      ckpt["config"]["model"]["beta_end"])
    real_feat = (real.reshape(len(real), -1) - pca_mean) @ pca_dirs
    out = {"seed": seed, "methods": sorted(methods)}
    arrays = {"real": real[: sampling["n_grid"]], "corners": corners[: sampling["n_grid"]].astype(np.float64)}
    for name, method in methods.items():
        gen = torch.Generator().manual_seed(seed)
        x, info = guided_sample(model, torch.from_numpy(classes), boxes, method,
                                {**sampling, "side": data["side"]}, abar, gen)
        imgs = x[:, 0].numpy()
        found, conf = detect(detector, imgs, classes)
        iou = box_iou(found, corners)
        feat = (imgs.reshape(len(imgs), -1) - pca_mean) @ pca_dirs
        cov = attention_coverage(info["maps"], info["mask"], boxes)
        out[name] = {"miou": float(iou.mean()), "acc50": float((iou >= 0.5).mean()),
                     "detector_conf": float(conf.mean()), "fd": frechet_distance(feat, real_feat),
                     "attn_mass": float(in_box_mass(info["maps"], info["mask"]).mean()),
                     "attn_coverage": cov["coverage"], "attn_entropy": cov["entropy"]}
        arrays[f"samples_{name}"] = imgs[: sampling["n_grid"]]
        log(f"seed {seed} {name}: " + ", ".join(f"{k}={v:.3f}" for k, v in out[name].items()))
    out["fd_real_real"] = frechet_distance(
        (render(digits["test_x"], digits["test_y"], classes, corners, data["side"], rng).reshape(len(real), -1)
         - pca_mean) @ pca_dirs, real_feat)
    save_arrays(out_npz, arrays, dtype=np.float64)
    write_json(out_json, out)


def sd_job(sd_cfg: dict, sampling: dict, methods: dict, seed: int, threads: int, out_json: str, out_npz: str) -> None:
    """Step winwinlay_sd (full scale): every method on every layout of the config with Stable Diffusion, the same
    initial latents per layout; records the object tokens' attention statistics at the end of guidance and the
    images. (Detector AP / FID of the paper's evaluation are not computed here.)"""
    from .guidance import guided_ddim
    from .sd import SDBackbone, initial_latents, install_capture, load_pipeline, token_positions

    torch.set_num_threads(threads)
    pipe = load_pipeline(sd_cfg)
    store = install_capture(pipe.unet, sd_cfg["attn_layers"])
    cfg = {**sampling, "boxdiff": {**sampling["boxdiff"], "temperature": sd_cfg["boxdiff_temperature"]}}
    out, arrays = {"seed": seed, "methods": sorted(methods), "layouts": []}, {}
    for i, layout in enumerate(sd_cfg["layouts"]):
        where = f"winwinlay.sd.layouts[{i}]"
        positions = token_positions(pipe.tokenizer, layout["prompt"], [o["token"] for o in layout["objects"]], where)
        backbone = SDBackbone(pipe, store, layout["prompt"], positions, 1, sd_cfg)
        boxes = torch.tensor([[o["box"] for o in layout["objects"]]], dtype=torch.float32)
        z0 = initial_latents(pipe, sd_cfg, 1, torch.Generator().manual_seed(seed * 100003 + i))
        row = {"prompt": layout["prompt"]}
        for name, method in methods.items():
            z, info = guided_ddim(backbone, z0.clone(), boxes, method, cfg, torch.Generator().manual_seed(seed))
            cov = attention_coverage(info["maps"].cpu(), info["mask"].cpu(), boxes)
            row[name] = {"attn_mass": float(in_box_mass(info["maps"], info["mask"]).mean()),
                         "attn_coverage": cov["coverage"], "attn_entropy": cov["entropy"],
                         "energy_first": float(info["energy_trace"][0].mean()) if info["energy_trace"] else None,
                         "energy_last": float(info["energy_trace"][-1].mean()) if info["energy_trace"] else None}
            arrays[f"layout{i}_{name}"] = backbone.decode(z)[0]
            log(f"seed {seed} layout {i} {name}: {row[name]}")
        out["layouts"].append(row)
    save_arrays(out_npz, arrays, dtype=np.uint8)
    write_json(out_json, out)


def claims_metrics(toy_json: str, guide_json: list[str]) -> dict:
    """Flat {metric: per-seed list} read by claims.yaml's criteria."""
    toy = read_json(toy_json)
    out = {k: v for k, v in toy.items() if k.startswith(TOY_METRICS)}
    runs = [read_json(p) for p in guide_json]
    for name in runs[0]["methods"]:
        for key in runs[0][name]:
            out[f"{key}_{name}"] = [r[name][key] for r in runs]
    out["fd_real_real"] = [r["fd_real_real"] for r in runs]
    return out


def write_paper_claims(toy_json: str, guide_json: list[str], train_json: str, scale: str, claims_path: str,
                       summary_path: str) -> None:
    """Step winwinlay_claims: measured metrics and the verdicts of claims.yaml."""
    measured = claims_metrics(toy_json, guide_json)
    measured["detector_miou_real"] = read_json(train_json)["detector_miou_real"]
    write_json(summary_path, measured)
    params = read_json(toy_json)["config"]["params"]
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale, expand_over={"param": params})
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
