"""Step winwinlay_sd (paper scale): every guidance method on the configured layouts with Stable Diffusion."""

from __future__ import annotations

import numpy as np
import torch

from methods.common.io import log, save_arrays, write_json

from .energies import in_box_mass
from .guidance import guided_ddim
from .sd import SDBackbone, initial_latents, install_capture, load_pipeline, token_positions
from .toy import attention_coverage


def sd_job(
    sd_cfg: dict,
    sampling: dict,
    methods: dict,
    seed: int,
    threads: int,
    out_json: str,
    out_npz: str,
    device: torch.device | str = "cpu",
    weights: str | None = None,
) -> None:
    """Every method on every layout of the config with Stable Diffusion (the weights folder `weights`, default
    sd.model_id) on `device`, the same initial latents per layout; records the object tokens' attention
    statistics at the end of guidance and the images. (Detector AP / FID of the paper's evaluation are not
    computed here.)"""
    torch.set_num_threads(threads)
    pipe = load_pipeline(sd_cfg, device, weights)
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
            maps, mask = info["maps"].cpu(), info["mask"].cpu()
            cov = attention_coverage(maps, mask, boxes)
            row[name] = {
                "attn_mass": float(in_box_mass(maps, mask).mean()),
                "attn_coverage": cov["coverage"],
                "attn_entropy": cov["entropy"],
                "energy_first": float(info["energy_trace"][0].mean()) if info["energy_trace"] else None,
                "energy_last": float(info["energy_trace"][-1].mean()) if info["energy_trace"] else None,
            }
            arrays[f"layout{i}_{name}"] = backbone.decode(z)[0]
            log(f"seed {seed} layout {i} {name}: {row[name]}")
        out["layouts"].append(row)
    save_arrays(out_npz, arrays, dtype=np.uint8)
    write_json(out_json, out)
