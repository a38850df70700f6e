"""Step winwinlay_guide (experiment 2): one sampling seed, every guidance method on the same layouts and noise."""

from __future__ import annotations

import numpy as np
import torch

from methods.common.io import load_torch, log, save_arrays, write_json

from .canvas import corners_to_boxes, load_digit_images, render, sample_layouts
from .diffusion import alpha_bars, guided_sample
from .energies import in_box_mass
from .evaluate import box_iou, detect, frechet_distance
from .model import Denoiser
from .toy import attention_coverage


def guide_job(
    ckpt_path: str,
    data: dict,
    sampling: dict,
    methods: dict,
    seed: int,
    threads: int,
    out_json: str,
    out_npz: str,
    device: torch.device | str = "cpu",
) -> None:
    """Every method (Layout-Guidance, BoxDiff, the ablations, WinWinLay) samples the seed's held-out layouts from
    the same initial noise with the denoiser on `device`; layout mIoU / AP50 by the detector, the Frechet-distance
    realism proxy and the attention statistics at the end of guidance (Sec. 5's comparison, stand-in)."""
    torch.set_num_threads(threads)
    ckpt = load_torch(ckpt_path)
    model = Denoiser(**ckpt["model_args"])
    model.load_state_dict(ckpt["model"])
    model.eval().requires_grad_(False).to(device)
    detector = {k: v.numpy() for k, v in ckpt["detector"].items()}
    pca_mean, pca_dirs = ckpt["pca_mean"].numpy(), ckpt["pca_dirs"].numpy()
    digits = load_digit_images(data["test_fraction"], data["split_seed"])
    rng = np.random.default_rng(1000 + seed)
    classes, corners = sample_layouts(sampling["n_samples"], data["side"], data["n_objects"], rng)
    real = render(digits["test_x"], digits["test_y"], classes, corners, data["side"], rng)
    boxes = torch.from_numpy(corners_to_boxes(corners, data["side"]))
    abar = alpha_bars(
        ckpt["config"]["model"]["n_timesteps"],
        ckpt["config"]["model"]["beta_start"],
        ckpt["config"]["model"]["beta_end"],
    )
    real_feat = (real.reshape(len(real), -1) - pca_mean) @ pca_dirs
    out = {"seed": seed, "methods": sorted(methods)}
    arrays = {"real": real[: sampling["n_grid"]], "corners": corners[: sampling["n_grid"]].astype(np.float64)}
    for name, method in methods.items():
        gen = torch.Generator().manual_seed(seed)
        x, info = guided_sample(
            model, torch.from_numpy(classes), boxes, method, {**sampling, "side": data["side"]}, abar, gen
        )
        imgs = x[:, 0].cpu().numpy()
        found, conf = detect(detector, imgs, classes)
        iou = box_iou(found, corners)
        feat = (imgs.reshape(len(imgs), -1) - pca_mean) @ pca_dirs
        maps, mask = info["maps"].cpu(), info["mask"].cpu()
        cov = attention_coverage(maps, mask, boxes)
        # trivial nulls, random boxes: the same samples and maps scored against another sample's layout
        cov_random = attention_coverage(maps, mask.roll(1, 0), boxes.roll(1, 0))
        out[name] = {
            "miou": float(iou.mean()),
            "miou_randbox": float(box_iou(found, np.roll(corners, 1, axis=0)).mean()),
            "attn_coverage_randbox": cov_random["coverage"],
            "acc50": float((iou >= 0.5).mean()),
            "detector_conf": float(conf.mean()),
            "fd": frechet_distance(feat, real_feat),
            "attn_mass": float(in_box_mass(maps, mask).mean()),
            "attn_coverage": cov["coverage"],
            "attn_entropy": cov["entropy"],
        }
        arrays[f"samples_{name}"] = imgs[: sampling["n_grid"]]
        log(f"seed {seed} {name}: " + ", ".join(f"{k}={v:.3f}" for k, v in out[name].items()))
    out["fd_real_real"] = frechet_distance(
        (
            render(digits["test_x"], digits["test_y"], classes, corners, data["side"], rng).reshape(len(real), -1)
            - pca_mean
        )
        @ pca_dirs,
        real_feat,
    )
    save_arrays(out_npz, arrays, dtype=np.float64)
    write_json(out_json, out)
