"""The steps as the DAG runs them at paper scale: any device, and the Stable Diffusion weights fetched on the
submit host (a pattern list that matches the repository's files, an atomic folder, a clear error)."""

from pathlib import Path

import pytest
import torch

from methods.winwinlay.diffusion import DigitBackbone, alpha_bars
from methods.winwinlay.energies import box_mask, box_prior
from methods.winwinlay.guidance import guidance_energy
from methods.winwinlay.model import Denoiser
from methods.winwinlay.weights import allow_patterns, check_weights, download_weights

# the files of a diffusers Stable Diffusion 1.5 repository (one name per kind; the big .ckpt files at the top)
SD15_FILES = [
    "model_index.json",
    "v1-5-pruned.ckpt",
    "v1-5-pruned-emaonly.safetensors",
    "feature_extractor/preprocessor_config.json",
    "safety_checker/config.json",
    "safety_checker/model.fp16.safetensors",
    "safety_checker/model.safetensors",
    "scheduler/scheduler_config.json",
    "text_encoder/config.json",
    "text_encoder/model.fp16.safetensors",
    "text_encoder/model.safetensors",
    "tokenizer/merges.txt",
    "tokenizer/special_tokens_map.json",
    "tokenizer/tokenizer_config.json",
    "tokenizer/vocab.json",
    "unet/config.json",
    "unet/diffusion_pytorch_model.fp16.safetensors",
    "unet/diffusion_pytorch_model.non_ema.safetensors",
    "unet/diffusion_pytorch_model.safetensors",
    "vae/config.json",
    "vae/diffusion_pytorch_model.fp16.safetensors",
    "vae/diffusion_pytorch_model.safetensors",
]


def test_denoiser_training_and_guidance_stay_on_the_model_device():
    """On the `meta` device a tensor created on the CPU inside the graph (as a CUDA run would hit) fails."""
    model = Denoiser(channels=8, token_dim=8).to("meta")
    classes = torch.tensor([[1, 2], [3, 4]], device="meta")
    eps, _ = model(torch.randn(2, 1, 16, 16, device="meta"), torch.tensor([3, 7], device="meta"), classes)
    eps.sum().backward()
    backbone = DigitBackbone(model, classes, alpha_bars(20, 1e-4, 0.02), 16)
    z = torch.randn(2, 1, 16, 16, device="meta", requires_grad=True)
    boxes = torch.tensor([[[0.0, 0.0, 0.5, 0.5], [0.5, 0.5, 1.0, 1.0]]] * 2)
    _, maps = backbone.guidance(z, 5)
    energy, _ = guidance_energy(
        maps[:, :, :],
        backbone.obj_index.to("meta"),
        box_mask(boxes, 8, 8).to("meta"),
        box_prior(boxes, 8, 8, 0.35).to("meta"),
        "nonlocal",
        1.0,
        {"layer_reduction": "per_map"},
    )
    (grad,) = torch.autograd.grad(energy.sum(), [z])
    assert grad.device.type == "meta" and grad.shape == z.shape


def _fake_snapshot(files):
    def snapshot(repo_id, revision, local_dir, allow_patterns):
        from fnmatch import fnmatch

        for name in files:
            if any(fnmatch(name, p) for p in allow_patterns):
                path = Path(local_dir) / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(name)
        (Path(local_dir) / ".cache").mkdir(exist_ok=True)

    return snapshot


@pytest.mark.parametrize(
    "variant, expect",
    [
        (
            "fp16",
            {
                "unet/diffusion_pytorch_model.fp16.safetensors",
                "vae/diffusion_pytorch_model.fp16.safetensors",
                "text_encoder/model.fp16.safetensors",
            },
        ),
        (
            None,
            {
                "unet/diffusion_pytorch_model.safetensors",
                "vae/diffusion_pytorch_model.safetensors",
                "text_encoder/model.safetensors",
            },
        ),
    ],
)
def test_download_fetches_the_variant_weights_and_no_checkpoint(tmp_path, variant, expect):
    folder = tmp_path / "sd" / "stable-diffusion-v1-5--stable-diffusion-v1-5"
    download_weights(
        "stable-diffusion-v1-5/stable-diffusion-v1-5", None, variant, str(folder), snapshot=_fake_snapshot(SD15_FILES)
    )
    got = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}
    assert {g for g in got if g.endswith((".safetensors", ".ckpt"))} == expect
    assert {
        "model_index.json",
        "scheduler/scheduler_config.json",
        "tokenizer/vocab.json",
        "tokenizer/merges.txt",
        "unet/config.json",
        "feature_extractor/preprocessor_config.json",
    } <= got
    assert not (folder / ".cache").exists() and not list(folder.parent.glob(".*.part"))


def test_download_without_the_variant_names_what_is_missing_and_leaves_nothing(tmp_path):
    files = [f for f in SD15_FILES if "fp16" not in f]
    folder = tmp_path / "sd" / "m"
    with pytest.raises(
        FileNotFoundError, match=r"no unet, vae, text_encoder for weight variant 'fp16'.*winwinlay.sd.variant"
    ):
        download_weights("owner/m", None, "fp16", str(folder), snapshot=_fake_snapshot(files))
    assert not folder.exists() and not list(folder.parent.glob(".*"))


def test_allow_patterns_leave_out_the_safety_checker():
    pats = allow_patterns("fp16")
    assert not any(p.startswith("safety_checker") for p in pats) and "model_index.json" in pats
    with pytest.raises(FileNotFoundError, match="model_index.json"):
        check_weights(Path("/nonexistent"), "fp16", "x")
