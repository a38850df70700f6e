"""Step gaprompt_pretrain: Point-MAE masked reconstruction of the backbone, or the released checkpoint loaded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from methods.common.io import load_arrays, log, save_torch, write_json

from .model import MaskedAutoencoder, backbone_from_config, load_pointmae_checkpoint
from .train import pretrain as run_pretrain


def pretrain_job(
    data_npz: str,
    backbone: dict,
    pretrain: dict,
    threads: int,
    out_ckpt: str,
    out_json: str,
    device: torch.device | str = "cpu",
) -> None:
    """Point-MAE masked reconstruction on the source clouds (on `device`), or (paper scale) the released
    Point-MAE checkpoint loaded into the same backbone (Sec. 4.1: GAPrompt adapts Point-MAE's pre-trained
    ViT-S). The backbone is saved on the CPU either way."""
    torch.set_num_threads(threads)
    torch.manual_seed(pretrain["seed"])
    bb = backbone_from_config(backbone)
    if backbone.get("checkpoint"):
        if not Path(backbone["checkpoint"]).is_file():
            raise FileNotFoundError(
                f"gaprompt.backbone.checkpoint: {backbone['checkpoint']} not found; download "
                "Point-MAE's pretrain.pth (github.com/Pang-Yatian/Point-MAE, releases) there"
            )
        info = load_pointmae_checkpoint(bb, backbone["checkpoint"])
        losses = []
        log(f"loaded {backbone['checkpoint']}: {info}")
    else:
        source = load_arrays(data_npz)["source"]
        if len(source) < pretrain["batch"]:
            raise ValueError(f"gaprompt: {len(source)} source clouds, fewer than gaprompt.pretrain.batch")
        mae = MaskedAutoencoder(
            bb, pretrain["decoder_depth"], backbone["heads"], pretrain["mask_ratio"], pretrain["init"]
        )
        log(f"pre-training on {device}")
        losses = run_pretrain(mae, source, pretrain, pretrain["seed"], log, device)
        bb.cpu()
    save_torch(out_ckpt, {"backbone": bb.state_dict(), "config": dict(backbone)})
    write_json(
        out_json,
        {
            "losses": losses,
            "first_loss": losses[0] if losses else None,
            "last_loss": float(np.mean(losses[-10:])) if losses else None,
        },
    )
