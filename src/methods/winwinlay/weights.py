"""Step winwinlay_sd_download (paper scale, on the submit host): the Stable Diffusion weights the GPU jobs load.

Compute nodes often have no internet, so the weights are fetched once, before any GPU job, into the resources
folder (huggingface_hub.snapshot_download): only what StableDiffusionPipeline loads without its safety checker
(model_index.json, the scheduler, tokenizer and feature-extractor configs, and the UNet, VAE and text encoder in
the configured weight variant), about 2 GB in fp16 instead of the repository's ~40 GB of checkpoints.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

WEIGHTED = ("unet", "vae", "text_encoder")
CONFIG_ONLY = ("scheduler", "tokenizer", "feature_extractor")


def weight_patterns(variant: str | None) -> list[str]:
    """The safetensors files of the weighted components in `variant` (e.g. fp16: `*.fp16.safetensors`; None:
    the full-precision `diffusion_pytorch_model.safetensors` / `model.safetensors`)."""
    if variant:
        return [f"{c}/*.{variant}.safetensors" for c in WEIGHTED]
    return [f"{c}/{name}" for c in WEIGHTED for name in ("diffusion_pytorch_model.safetensors", "model.safetensors")]


def allow_patterns(variant: str | None) -> list[str]:
    """What snapshot_download fetches: the pipeline index, every component's configs, the weights of `variant`."""
    configs = [f"{c}/*.json" for c in WEIGHTED + CONFIG_ONLY] + ["tokenizer/*.txt"]
    return ["model_index.json", *configs, *weight_patterns(variant)]


def check_weights(folder: str | Path, variant: str | None, model_id: str) -> None:
    """Every weighted component has its config and a weight file of `variant`; else name what is missing."""
    folder = Path(folder)
    missing = [
        c
        for c in WEIGHTED
        if not (folder / c / "config.json").is_file()
        or not any(any(folder.glob(p)) for p in weight_patterns(variant) if p.startswith(f"{c}/"))
    ]
    if not (folder / "model_index.json").is_file():
        missing.insert(0, "model_index.json")
    if missing:
        raise FileNotFoundError(
            f"{model_id}: the download has no {', '.join(missing)} for weight variant {variant!r} "
            f"(files {', '.join(weight_patterns(variant))}); set winwinlay.sd.variant to a variant the repository "
            "provides (null: full precision) or winwinlay.sd.model_id to a diffusers StableDiffusionPipeline repository"
        )


def download_weights(model_id: str, revision: str | None, variant: str | None, folder: str, snapshot=None) -> None:
    """Fetch the pipeline's files into `folder` (atomically: a sibling temporary folder renamed at the end);
    a gated repository reads the token from HF_TOKEN or `huggingface-cli login` (the dry run checks it)."""
    if snapshot is None:
        from huggingface_hub import snapshot_download as snapshot
    out = Path(folder)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".part"))
    try:
        snapshot(repo_id=model_id, revision=revision, local_dir=str(tmp), allow_patterns=allow_patterns(variant))
        check_weights(tmp, variant, model_id)
        shutil.rmtree(tmp / ".cache", ignore_errors=True)  # huggingface_hub's download metadata
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
