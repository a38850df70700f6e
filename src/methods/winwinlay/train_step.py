"""Step winwinlay_train: the cross-attention denoiser, the layout detector and the realism proxy's PCA features."""

from __future__ import annotations

import numpy as np
import torch

from methods.common.io import log, save_torch, write_json

from .canvas import load_digit_images, render, sample_layouts
from .diffusion import train_denoiser
from .evaluate import box_iou, detect, fit_pca, train_detector


def train_job(
    data: dict,
    model_cfg: dict,
    detector_cfg: dict,
    seed: int,
    threads: int,
    out_ckpt: str,
    out_json: str,
    device: torch.device | str = "cpu",
) -> None:
    """The denoiser (the stand-in for Stable Diffusion's UNet, trained on `device`), the sliding-window detector
    of the layout metric and the PCA features of the realism proxy (Sec. 5's mIoU and FID, stand-ins); the
    checkpoint holds CPU tensors."""
    torch.set_num_threads(threads)
    digits = load_digit_images(data["test_fraction"], data["split_seed"])
    log(f"digits: {len(digits['train_x'])} train, {len(digits['test_x'])} test; model {model_cfg}; device {device}")
    model, losses = train_denoiser(
        digits, {**model_cfg, "side": data["side"], "n_objects": data["n_objects"]}, seed, log, device
    )
    model.cpu()
    rng = np.random.default_rng(seed + 1)
    detector = train_detector(digits, data["side"], data["n_objects"], detector_cfg["n_background"], seed)
    classes, corners = sample_layouts(detector_cfg["n_check"], data["side"], data["n_objects"], rng)
    real = render(digits["test_x"], digits["test_y"], classes, corners, data["side"], rng)
    found, _ = detect(detector, real, classes)
    detector_miou = float(box_iou(found, corners).mean())
    log(f"detector mIoU on held-out real canvases: {detector_miou:.3f}")
    classes, corners = sample_layouts(detector_cfg["n_pca_fit"], data["side"], data["n_objects"], rng)
    pca_mean, pca_dirs = fit_pca(
        render(digits["train_x"], digits["train_y"], classes, corners, data["side"], rng),
        detector_cfg["pca_components"],
    )
    save_torch(
        out_ckpt,
        {
            "model": model.state_dict(),
            "model_args": {"channels": model_cfg["channels"], "token_dim": model_cfg["token_dim"]},
            "detector": {k: torch.from_numpy(v) for k, v in detector.items()},
            "pca_mean": torch.from_numpy(pca_mean),
            "pca_dirs": torch.from_numpy(pca_dirs),
            "config": {"data": data, "model": model_cfg, "seed": seed},
        },
    )
    write_json(
        out_json,
        {
            "final_loss": float(np.mean(losses[-50:])),
            "loss_curve": losses[:: max(len(losses) // 100, 1)],
            "detector_miou_real": detector_miou,
        },
    )
