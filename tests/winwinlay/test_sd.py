"""Full-scale path (Stable Diffusion through diffusers) on a randomly initialised tiny pipeline built and saved
locally, loaded back through the same from_pretrained path as config/full.yaml's model id (offline)."""

import json

import numpy as np
import pytest
import torch

pytest.importorskip("diffusers")

from diffusers import AutoencoderKL, DDIMScheduler, StableDiffusionPipeline, UNet2DConditionModel  # noqa: E402
from diffusers.models.attention_processor import AttnProcessor  # noqa: E402
from transformers import CLIPTextConfig, CLIPTextModel, CLIPTokenizer  # noqa: E402

from methods.winwinlay.energies import box_mask, box_prior  # noqa: E402
from methods.winwinlay.guidance import guidance_energy, guided_ddim  # noqa: E402
from methods.winwinlay.sd import SDBackbone, initial_latents, install_capture, load_pipeline, token_positions  # noqa: E402
from methods.winwinlay.update import adaptive_step, plain_step  # noqa: E402

WORDS = ["a", "cat", "dog", "and", "on", "the", "grass"]


def _tokenizer(path):
    """A CLIP BPE tokenizer whose vocabulary holds the letters and the whole words of WORDS."""
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    vocab = ["<|startoftext|>", "<|endoftext|>"] + letters + [c + "</w>" for c in letters]
    merges = []
    for w in WORDS:
        if len(w) == 1:
            continue
        parts = list(w[:-1]) + [w[-1] + "</w>"]
        while len(parts) > 1:
            pair = (parts[0], parts[1])
            if " ".join(pair) not in merges:
                merges.append(" ".join(pair))
            parts = [parts[0] + parts[1]] + parts[2:]
            if parts[0] not in vocab:
                vocab.append(parts[0])
    (path / "vocab.json").write_text(json.dumps({t: i for i, t in enumerate(vocab)}))
    (path / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n")
    return CLIPTokenizer(str(path / "vocab.json"), str(path / "merges.txt"), model_max_length=16), len(vocab)


@pytest.fixture(scope="module")
def sd_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny_sd")
    torch.manual_seed(0)
    tok, n_vocab = _tokenizer(root)
    text = CLIPTextModel(
        CLIPTextConfig(
            vocab_size=n_vocab,
            hidden_size=32,
            intermediate_size=37,
            num_hidden_layers=2,
            num_attention_heads=4,
            max_position_embeddings=16,
            bos_token_id=0,
            eos_token_id=1,
            pad_token_id=1,
        )
    )
    # like SD 1.5 in miniature: attention in the first down block, the mid block and the last up block;
    # latents 16x16, mid block 8x8, up_blocks.1 16x16
    unet = UNet2DConditionModel(
        sample_size=16,
        in_channels=4,
        out_channels=4,
        layers_per_block=1,
        block_out_channels=(32, 64),
        norm_num_groups=32,
        cross_attention_dim=32,
        attention_head_dim=4,
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
    )
    vae = AutoencoderKL(
        in_channels=3,
        out_channels=3,
        block_out_channels=(32, 32),
        latent_channels=4,
        down_block_types=("DownEncoderBlock2D",) * 2,
        up_block_types=("UpDecoderBlock2D",) * 2,
        norm_num_groups=32,
        sample_size=32,
    )
    sched = DDIMScheduler(
        beta_start=0.00085,
        beta_end=0.012,
        beta_schedule="scaled_linear",
        clip_sample=False,
        set_alpha_to_one=False,
        steps_offset=1,
    )
    pipe = StableDiffusionPipeline(
        vae=vae,
        text_encoder=text,
        tokenizer=tok,
        unet=unet,
        scheduler=sched,
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )
    pipe.save_pretrained(root / "pipe")
    return root / "pipe"


SD_CFG = {
    "dtype": "float32",
    "height": 32,
    "width": 32,
    "guidance_scale": 7.5,
    "attn_layers": ["mid_block", "up_blocks.1"],
    "map_res": 16,
    "boxdiff_temperature": 100.0,
}
SAMPLING = {
    "ddim_steps": 6,
    "guided_steps": 3,
    "max_iter": 3,
    "loss_threshold": 0.0,
    "loss_scale": 30.0,
    "sigma_frac": 0.35,
    "rho": 1.0,
    "snr": 0.06,
    "nu_max": 100.0,
    "langevin_noise": True,
    "layer_reduction": "per_map",
    "boxdiff": {
        "top_frac": 0.8,
        "corner_margin": 6,
        "temperature": 100.0,
        "smooth": True,
        "scale_factor": 20.0,
        "scale_range": [1.0, 0.5],
        "max_iter_to_alter": 3,
        "refine": True,
        "thresholds": {0: 0.05},
        "max_refinement_steps": 2,
    },
}
PROMPT = "a cat and a dog on the grass"
BOXES = torch.tensor([[[0.0, 0.25, 0.5, 0.75], [0.5, 0.0, 1.0, 0.5]]])


@pytest.fixture(scope="module")
def loaded(sd_dir):
    torch.set_num_threads(1)
    cfg = {**SD_CFG, "model_id": str(sd_dir)}
    pipe = load_pipeline(cfg)
    store = install_capture(pipe.unet, cfg["attn_layers"])
    pos = token_positions(pipe.tokenizer, PROMPT, ["cat", "dog"], "winwinlay.sd.layouts[0]")
    return pipe, store, cfg, SDBackbone(pipe, store, PROMPT, pos, 2, cfg), pos


def test_token_positions_and_bad_token(loaded):
    pipe, _, _, _, pos = loaded
    assert pos == [2, 5]  # <start> a cat and a dog ...
    with pytest.raises(ValueError, match=r"layouts\[0\]\.objects\[0\]\.token 'bird' is"):
        token_positions(pipe.tokenizer, PROMPT, ["bird"], "winwinlay.sd.layouts[0]")
    with pytest.raises(ValueError, match="does not occur"):
        token_positions(pipe.tokenizer, "a cat", ["dog"], "winwinlay.sd.layouts[0]")


def test_bad_attn_layers_named(loaded):
    pipe = loaded[0]
    with pytest.raises(ValueError, match="winwinlay.sd.attn_layers"):
        install_capture(pipe.unet, ["down_blocks.7"])


def test_captured_maps_are_the_unets_attention(loaded):
    """The capturing processors leave the UNet's output unchanged (they are its attention), every captured
    layer's probabilities sum to 1 over the tokens, and the maps are resized to 16x16 from 8x8 and 16x16."""
    pipe, store, cfg, backbone, _ = loaded
    z = initial_latents(pipe, cfg, 2, torch.Generator().manual_seed(0))
    t = 500
    eps, maps = backbone.guidance(z, t)
    store.active = True
    with torch.no_grad():
        pipe.unet(z, t, encoder_hidden_states=backbone.cond)
    store.active = False
    shapes = sorted(r.shape[2] for r in store.records)
    assert shapes == [64, 256, 256]  # the mid block at 8x8, the two attentions of up_blocks.1 at 16x16
    heads = store.records[0].shape[1]
    for r in store.records:
        assert torch.allclose(r.sum(-1), torch.ones_like(r.sum(-1)), atol=1e-5)
    full = store.token_maps(backbone.latent_hw, (16, 16))
    store.reset()
    assert full.shape == (2, 3 * heads, 16, 16, 16)  # (B, layers x heads, N tokens, 16, 16)
    assert torch.allclose(full.sum(2), torch.ones(2, 3 * heads, 16, 16), atol=1e-5)
    assert maps.shape == (2, 3 * heads, 14, 16, 16) and torch.equal(maps, full[:, :, 1:-1])
    procs = dict(pipe.unet.attn_processors)
    pipe.unet.set_attn_processor(AttnProcessor())
    with torch.no_grad():
        ref = pipe.unet(z, t, encoder_hidden_states=backbone.cond).sample
    pipe.unet.set_attn_processor(procs)
    assert torch.allclose(eps, ref, atol=1e-6)


def test_energy_decreases_under_plain_updates(loaded):
    """Plain gradient steps on the latent through the UNet lower each energy (small steps, same t)."""
    pipe, _, cfg, backbone, _ = loaded
    t = 800
    a_t = float(backbone.alphas_cumprod[t])
    mask, prior = box_mask(BOXES.expand(2, -1, -1), 16, 16), box_prior(BOXES.expand(2, -1, -1), 16, 16, 0.35)
    bd_cfg = {"boxdiff": {**SAMPLING["boxdiff"], "temperature": 100.0}}
    for energy in ("common", "nonlocal", "boxdiff"):
        z = initial_latents(pipe, cfg, 2, torch.Generator().manual_seed(1))
        values = []
        for _ in range(4):
            z = z.detach().requires_grad_(True)
            _, maps = backbone.guidance(z, t)
            e, _ = guidance_energy(maps, backbone.obj_index, mask, prior, energy, 0.5, bd_cfg, BOXES.expand(2, -1, -1))
            values.append(e.detach())
            (g,) = torch.autograd.grad(e.sum(), [z])
            step = 0.05 / g.flatten(1).norm(dim=1).max()  # a small step of fixed length in z
            z = plain_step(z.detach(), g, float(step) / (1 - a_t), a_t)
        assert (values[-1] < values[0]).all(), (energy, values)


def test_adaptive_step_reduces_to_plain_on_the_unet(loaded):
    """With the score weight and noise switched off, the adaptive update is the plain update with step xi nu."""
    pipe, _, cfg, backbone, _ = loaded
    t = 600
    a_t = float(backbone.alphas_cumprod[t])
    mask = box_mask(BOXES.expand(2, -1, -1), 16, 16)
    z = initial_latents(pipe, cfg, 2, torch.Generator().manual_seed(2)).requires_grad_(True)
    eps, maps = backbone.guidance(z, t)
    e, _ = guidance_energy(maps, backbone.obj_index, mask, mask, "common", 0.0, {})
    (g,) = torch.autograd.grad(e.sum(), [z])
    score = -eps.detach() / (1 - a_t) ** 0.5
    noise = torch.randn(z.shape, generator=torch.Generator().manual_seed(3))
    ada = adaptive_step(z.detach(), score, g, noise, 0.06, 100.0, add_noise=False, score_weight=0.0)
    nu = (score.flatten(1).norm(dim=1) / g.flatten(1).norm(dim=1)).clamp(max=100.0)
    xi = 2 * (0.06 * noise.flatten(1).norm(dim=1) / (nu * g.flatten(1).norm(dim=1))) ** 2
    for i in range(2):
        plain = plain_step(z.detach()[i : i + 1], g[i : i + 1], float(xi[i] * nu[i]) / (1 - a_t), a_t)
        assert torch.allclose(ada[i : i + 1], plain, atol=1e-6)


def test_guided_sampling_end_to_end(loaded):
    """The whole guided loop on the tiny SD: every guided step takes max_iter inner updates (threshold 0),
    guidance changes the sample and moves attention into the boxes vs unguided, decoding gives images."""
    pipe, _, cfg, backbone, _ = loaded
    z0 = initial_latents(pipe, cfg, 2, torch.Generator().manual_seed(4))
    boxes = BOXES.expand(2, -1, -1)
    res = {}
    for name, method in {
        "none": {"energy": "none", "update": "plain"},
        "lg": {"energy": "common", "update": "plain"},
        "boxdiff": {"energy": "boxdiff", "update": "boxdiff"},
        "winwinlay": {"energy": "nonlocal", "update": "adaptive"},
    }.items():
        z, info = guided_ddim(backbone, z0.clone(), boxes, method, SAMPLING, torch.Generator().manual_seed(0))
        assert torch.isfinite(z).all() and info["maps"].shape == (2, 2, 16, 16)
        assert not torch.equal(z, z0)
        res[name] = (z, info)
    assert not torch.equal(res["none"][0], res["lg"][0])
    assert len(res["lg"][1]["energy_trace"]) == SAMPLING["guided_steps"] * SAMPLING["max_iter"]
    from methods.winwinlay.energies import in_box_mass

    mass = {k: in_box_mass(v[1]["maps"], v[1]["mask"]).mean().item() for k, v in res.items()}
    print(mass)
    assert mass["lg"] > mass["none"]
    img = backbone.decode(res["winwinlay"][0])
    assert img.shape == (2, 32, 32, 3) and img.dtype == np.uint8


def test_sd_job_writes_every_method_and_layout(sd_dir, tmp_path):
    """Step winwinlay_sd end to end on the local pipeline, as config/full.yaml's sd section drives it: the weights
    come from the folder winwinlay_sd_download fills (here the local pipeline), never from the Hub id."""
    from methods.common.io import load_arrays, read_json
    from methods.winwinlay.sd_step import sd_job

    sd_cfg = {
        **SD_CFG,
        "model_id": "owner/not-on-this-machine",
        "revision": None,
        "layouts": [
            {
                "prompt": PROMPT,
                "objects": [
                    {"token": "cat", "box": [0.0, 0.25, 0.5, 0.75]},
                    {"token": "dog", "box": [0.5, 0.0, 1.0, 0.5]},
                ],
            },
            {"prompt": "a dog on the grass", "objects": [{"token": "dog", "box": [0.2, 0.2, 0.8, 0.8]}]},
        ],
    }
    methods = {"none": {"energy": "none", "update": "plain"}, "winwinlay": {"energy": "nonlocal", "update": "adaptive"}}
    sampling = {**SAMPLING, "ddim_steps": 3, "guided_steps": 2, "max_iter": 2}
    sd_job(
        sd_cfg,
        sampling,
        methods,
        0,
        1,
        str(tmp_path / "s.json"),
        str(tmp_path / "s.npz"),
        device="cpu",
        weights=str(sd_dir),
    )
    out, arrays = read_json(tmp_path / "s.json"), load_arrays(tmp_path / "s.npz")
    assert [r["prompt"] for r in out["layouts"]] == [PROMPT, "a dog on the grass"]
    for row in out["layouts"]:
        assert 0 <= row["winwinlay"]["attn_mass"] <= 1 and row["none"]["energy_first"] is None
        assert row["winwinlay"]["energy_first"] is not None
    assert arrays["layout1_winwinlay"].shape == (32, 32, 3) and arrays["layout1_winwinlay"].dtype == np.uint8
