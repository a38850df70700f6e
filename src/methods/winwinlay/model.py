"""A small class-conditioned denoiser with cross-attention (the tiny stand-in for Stable Diffusion's UNet).

Two cross-attention layers at half resolution (a "mid" layer and an "up" layer, as Layout-Guidance reads
the mid-block and first up-block maps) attend from every position to the tokens [background, class_1, ...,
class_K]; the attention probabilities of the class tokens are the maps the layout energies act on. The
model never sees boxes: where a digit goes is decided by the sampler, which is what guidance steers.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal embedding of integer timesteps (B,) -> (B, dim)."""
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([torch.sin(args), torch.cos(args)], -1)


class ResBlock(nn.Module):
    def __init__(self, cin: int, cout: int, tdim: int):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(8, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.t = nn.Linear(tdim, cout)
        self.n2, self.c2 = nn.GroupNorm(8, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, temb):
        h = self.c1(F.silu(self.n1(x))) + self.t(temb)[:, :, None, None]
        h = self.c2(F.silu(self.n2(h)))
        return h + self.skip(x)


class CrossAttention(nn.Module):
    """Single-head cross-attention from image positions to tokens; returns the output and the (B, HW, N) probs."""

    def __init__(self, channels: int, dim: int):
        super().__init__()
        self.norm = nn.GroupNorm(8, channels)
        self.q, self.k, self.v = nn.Linear(channels, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.out = nn.Linear(dim, channels)

    def forward(self, x, tokens):
        b, c, h, w = x.shape
        q = self.q(self.norm(x).flatten(2).transpose(1, 2))  # (B, HW, d)
        probs = torch.softmax(q @ self.k(tokens).transpose(1, 2) / math.sqrt(q.shape[-1]), -1)  # (B, HW, N)
        out = self.out(probs @ self.v(tokens))  # (B, HW, C)
        return x + out.transpose(1, 2).reshape(b, c, h, w), probs


class Denoiser(nn.Module):
    """eps-prediction network on side x side canvases; forward returns (eps, maps (B, 2, 1 + K, side/2, side/2)):
    the attention probabilities of every token (background first) in each of the two layers (mid, up)."""

    def __init__(self, channels: int = 32, token_dim: int = 64, n_classes: int = 10):
        super().__init__()
        c, tdim = channels, 4 * channels
        self.tdim = tdim
        self.temb = nn.Sequential(nn.Linear(tdim, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.class_emb = nn.Embedding(n_classes, token_dim)
        self.bg_token = nn.Parameter(torch.randn(1, 1, token_dim) * 0.02)
        self.conv_in = nn.Conv2d(1, c, 3, padding=1)
        self.rb_in = ResBlock(c, c, tdim)
        self.down = nn.Conv2d(c, 2 * c, 3, stride=2, padding=1)
        self.rb_mid = ResBlock(2 * c, 2 * c, tdim)
        self.attn_mid = CrossAttention(2 * c, token_dim)
        self.rb_up = ResBlock(2 * c, 2 * c, tdim)
        self.attn_up = CrossAttention(2 * c, token_dim)
        self.up = nn.Conv2d(2 * c, c, 3, padding=1)
        self.rb_out = ResBlock(2 * c, c, tdim)
        self.norm_out, self.conv_out = nn.GroupNorm(8, c), nn.Conv2d(c, 1, 3, padding=1)

    def tokens(self, classes: torch.Tensor) -> torch.Tensor:
        """(B, 1 + K, d): background token then one token per object class."""
        return torch.cat([self.bg_token.expand(len(classes), -1, -1), self.class_emb(classes)], 1)

    def forward(self, x, t, classes):
        temb = self.temb(timestep_embedding(t, self.tdim))
        tok = self.tokens(classes)
        h0 = self.rb_in(self.conv_in(x), temb)  # (B, c, S, S)
        h = self.rb_mid(self.down(h0), temb)  # (B, 2c, S/2, S/2)
        h, p_mid = self.attn_mid(h, tok)
        h = self.rb_up(h, temb)
        h, p_up = self.attn_up(h, tok)
        h = self.up(F.interpolate(h, scale_factor=2, mode="nearest"))
        h = self.rb_out(torch.cat([h, h0], 1), temb)
        eps = self.conv_out(F.silu(self.norm_out(h)))
        side = h0.shape[-1] // 2
        maps = torch.stack([p_mid, p_up], 1)  # (B, 2, HW, N): every token, per layer
        return eps, maps.transpose(2, 3).reshape(len(x), 2, -1, side, side)
