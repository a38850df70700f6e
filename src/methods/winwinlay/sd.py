"""Full scale: Stable Diffusion (1.5 in config/full.yaml) through `diffusers`, guided by the same loop and
energies as the tiny denoiser (guidance.guided_ddim).

Cross-attention maps are read with an attention processor installed on the UNet's cross-attention layers
named in the config (Layout-Guidance reads the mid block and the first up block with attention, both at
16x16 for a 512x512 image once the 8x8 mid maps are upsampled): the processor is diffusers' own
AttnProcessor, with the attention probabilities it computes recorded on the way, so the maps are exactly
the ones the UNet multiplies its values by. Each layer's and head's maps are resized to map_res and kept
apart (Layout-Guidance's loss is per head and layer; BoxDiff and the non-local prior average them); the text
maps handed to the energies are tokens 1 .. 75 (the start token and the last position left out, as BoxDiff
does).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from diffusers.models.attention_processor import AttnProcessor

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


class AttentionStore:
    """Attention probabilities recorded while `active`: one (B, heads, HW, N) tensor per layer call."""

    def __init__(self):
        self.active, self.records = False, []

    def record(self, probs: torch.Tensor, heads: int) -> None:
        self.records.append(probs.reshape(-1, heads, *probs.shape[1:]))

    def reset(self) -> None:
        self.records = []

    def token_maps(self, latent_hw: tuple[int, int], size: tuple[int, int]) -> torch.Tensor:
        """(B, L, N, size) maps: each layer's and head's (HW, N) probabilities laid out on its grid (same aspect as
        the latent), resized bilinearly to `size`; L = layers x heads (Layout-Guidance's loss is per head and
        layer; averaging over L gives the head- and layer-averaged maps of BoxDiff)."""
        if not self.records:
            raise RuntimeError("no cross-attention probabilities were recorded; check winwinlay.sd.attn_layers")
        lat_h, lat_w = latent_hw
        out = []
        for probs in self.records:
            b, heads, hw, n = probs.shape
            h = int(round(lat_h / (lat_h * lat_w / hw) ** 0.5))
            grid = probs.float().transpose(2, 3).reshape(b * heads, n, h, hw // h)
            if grid.shape[-2:] != size:
                grid = F.interpolate(grid, size=size, mode="bilinear", align_corners=False)
            out.append(grid.reshape(b, heads, n, *size))
        return torch.cat(out, 1)


class CapturingProcessor(AttnProcessor):
    """diffusers' AttnProcessor that hands the attention probabilities it uses to an AttentionStore."""

    def __init__(self, store: AttentionStore):
        super().__init__()
        self.store = store

    def __call__(
        self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None, temb=None, *args, **kwargs
    ):
        if not self.store.active or encoder_hidden_states is None:
            return super().__call__(attn, hidden_states, encoder_hidden_states, attention_mask, temb, *args, **kwargs)
        scores = attn.get_attention_scores

        def recording(query, key, mask=None):
            probs = scores(query, key, mask)
            self.store.record(probs, attn.heads)
            return probs

        attn.get_attention_scores = recording  # instance attribute shadows the method for this call only
        try:
            return super().__call__(attn, hidden_states, encoder_hidden_states, attention_mask, temb, *args, **kwargs)
        finally:
            del attn.get_attention_scores


def install_capture(unet, layers: list[str]) -> AttentionStore:
    """Put a CapturingProcessor on every cross-attention (attn2) module under the given name prefixes."""
    store = AttentionStore()
    procs = dict(unet.attn_processors)
    chosen = [n for n in procs if n.endswith("attn2.processor") and any(n.startswith(p + ".") for p in layers)]
    if not chosen:
        names = sorted({n.split(".attentions")[0] for n in procs if n.endswith("attn2.processor")})
        raise ValueError(
            f"config winwinlay.sd.attn_layers {layers} matches no cross-attention layer of the UNet; "
            f"use prefixes among {names}"
        )
    for n in chosen:
        procs[n] = CapturingProcessor(store)
    unet.set_attn_processor(procs)
    return store


def load_pipeline(sd_cfg: dict, device: torch.device | str = "cpu", path: str | None = None):
    """StableDiffusionPipeline.from_pretrained(path: the weights the download step fetched; default model_id, a
    Hub id or a local folder) in sd.dtype and sd.variant's weight files, with a DDIM scheduler from its own config
    and no safety checker, on `device` (the job's, methods.common.device.job_device); eval mode, no parameter
    gradients."""
    from diffusers import DDIMScheduler, StableDiffusionPipeline

    source = path or sd_cfg["model_id"]
    pipe = StableDiffusionPipeline.from_pretrained(
        source,
        revision=None if path else sd_cfg.get("revision"),
        variant=sd_cfg.get("variant"),
        dtype=DTYPES[sd_cfg["dtype"]],
        safety_checker=None,
        requires_safety_checker=False,
    )
    pipe.scheduler = DDIMScheduler.from_config(pipe.scheduler.config)
    pipe = pipe.to(device)
    for m in (pipe.unet, pipe.vae, pipe.text_encoder):
        m.eval().requires_grad_(False)
    return pipe


def token_positions(tokenizer, prompt: str, words: list[str], where: str) -> list[int]:
    """Position of each object word in the prompt's token ids (start token at 0); each word must be one token."""
    ids = tokenizer(prompt, truncation=True, max_length=tokenizer.model_max_length).input_ids
    out = []
    for j, word in enumerate(words):
        wid = tokenizer(word, add_special_tokens=False).input_ids
        if len(wid) != 1:
            raise ValueError(
                f"config {where}.objects[{j}].token {word!r} is {len(wid)} tokens for the tokenizer; "
                "name one word of the prompt that is a single token"
            )
        if wid[0] not in ids:
            raise ValueError(f"config {where}.objects[{j}].token {word!r} does not occur in the prompt {prompt!r}")
        out.append(ids.index(wid[0]))
    return out


class SDBackbone:
    """A Stable Diffusion pipeline seen through the interface of guidance.guided_ddim (one prompt, batch B)."""

    clip_x0 = False

    def __init__(self, pipe, store: AttentionStore, prompt: str, positions: list[int], batch: int, sd_cfg: dict):
        self.pipe, self.store, self.cfg = pipe, store, sd_cfg
        tok, device = pipe.tokenizer, pipe.device
        enc = lambda text: pipe.text_encoder(
            tok(
                [text] * batch,
                padding="max_length",  # noqa: E731
                max_length=tok.model_max_length,
                truncation=True,
                return_tensors="pt",
            ).input_ids.to(device)
        )[0]
        with torch.no_grad():
            self.cond, self.uncond = enc(prompt), enc("")
        sched = pipe.scheduler
        self.alphas_cumprod = sched.alphas_cumprod.float().cpu()
        self.final_alpha_cumprod = float(sched.final_alpha_cumprod)
        side = max(sd_cfg["height"], sd_cfg["width"])
        self.map_size = (sd_cfg["map_res"] * sd_cfg["height"] // side, sd_cfg["map_res"] * sd_cfg["width"] // side)
        self.latent_hw = (sd_cfg["height"] // pipe.vae_scale_factor, sd_cfg["width"] // pipe.vae_scale_factor)
        # text maps are tokens 1 .. N-2, so an object at token position p is index p - 1 among them
        self.obj_index = torch.tensor([p - 1 for p in positions]).expand(batch, -1)

    def timesteps(self, n_steps: int) -> list[int]:
        self.pipe.scheduler.set_timesteps(n_steps)
        return [int(t) for t in self.pipe.scheduler.timesteps]

    def _unet(self, z, t, emb):
        return self.pipe.unet(z.to(self.pipe.unet.dtype), t, encoder_hidden_states=emb).sample.float()

    def guidance(self, z, t):
        """Conditional pass (as Layout-Guidance computes its loss) with the maps recorded."""
        self.store.reset()
        self.store.active = True
        try:
            eps = self._unet(z, t, self.cond)
        finally:
            self.store.active = False
        maps = self.store.token_maps(self.latent_hw, self.map_size)
        self.store.reset()
        return eps, maps[:, :, 1:-1]

    @torch.no_grad()
    def eps(self, z, t):
        """Classifier-free guided noise prediction used for the DDIM step."""
        w = self.cfg["guidance_scale"]
        if w == 1.0:
            return self._unet(z, t, self.cond)
        e_u, e_c = self._unet(torch.cat([z, z]), t, torch.cat([self.uncond, self.cond])).chunk(2)
        return e_u + w * (e_c - e_u)

    @torch.no_grad()
    def decode(self, z: torch.Tensor) -> np.ndarray:
        """uint8 images (B, H, W, 3) from latents."""
        vae = self.pipe.vae
        x = vae.decode(z.to(vae.dtype) / vae.config.scaling_factor).sample.float()
        return ((x.clamp(-1, 1) + 1) * 127.5).round().byte().permute(0, 2, 3, 1).cpu().numpy()


def initial_latents(pipe, sd_cfg: dict, batch: int, gen: torch.Generator) -> torch.Tensor:
    """z_T ~ N(0, I) x init_noise_sigma at the latent size, drawn on the CPU generator (float32; the same latents on
    every device), then moved to the pipeline's device."""
    c = pipe.unet.config.in_channels
    h, w = sd_cfg["height"] // pipe.vae_scale_factor, sd_cfg["width"] // pipe.vae_scale_factor
    z = torch.randn(batch, c, h, w, generator=gen) * pipe.scheduler.init_noise_sigma
    return z.to(pipe.device)
