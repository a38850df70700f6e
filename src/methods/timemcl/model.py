"""TimeMCL network, the DeepAR-style Gaussian baseline, and seasonal naive.

Shapes: B windows, C context steps, H horizon steps, D series dimensions, K hypotheses.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

ZERO_SCALE = 1e-8  # a context whose mean |x| is below this is treated as all-zero


@dataclass
class ModelConfig:
    dim: int  # D, number of series modelled jointly
    context_length: int  # C, steps the encoder reads
    horizon: int  # H, steps predicted
    hidden: int = 40  # LSTM cells per layer (paper/TimeGrad: 40)
    layers: int = 2  # LSTM layers (paper/TimeGrad: 2)
    n_hypotheses: int = 8  # K, prediction (and score) heads
    scaling: bool = True  # DeepAR mean scaling; off for toy processes that live around 0
    linear_skip: bool = True  # TimeMCL only: add a per-dim linear map of the scaled context to every head

    @classmethod
    def from_dict(cls, d: dict) -> "ModelConfig":
        """Build from a plain dict; unknown keys are an error, not silently dropped."""
        allowed = [f.name for f in dataclasses.fields(cls)]
        for key in d:
            if key not in allowed:
                raise ValueError(f"ModelConfig: unknown key {key!r}; allowed keys: {', '.join(allowed)}")
        cfg = cls(**d)
        for name in ("dim", "context_length", "horizon", "hidden", "layers", "n_hypotheses"):
            assert getattr(cfg, name) >= 1, f"ModelConfig.{name} must be >= 1, got {getattr(cfg, name)}"
        return cfg


def mean_scale(context: torch.Tensor, enabled: bool = True) -> torch.Tensor:
    """DeepAR mean scaling (Salinas et al. 2020): per window and dim, scale = mean_t |x_t| over the context.

    context (B, C, D) -> scale (B, 1, D). All-zero contexts get scale 1 (GluonTS falls back to a
    batch-wide default there; a per-window rule keeps predictions independent of the batch).
    """
    if not enabled:
        return torch.ones_like(context[:, :1, :])
    scale = context.abs().mean(dim=1, keepdim=True)  # (B, 1, D)
    return torch.where(scale > ZERO_SCALE, scale, torch.ones_like(scale))


def encoder_inputs(values_scaled: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """LSTM inputs: the scaled values and log(scale) at every step (DeepAR feeds log-scale as a feature).

    Without log(scale) the network could not know the absolute level the scaled window came from.
    values_scaled (B, T, D), scale (B, 1, D) -> (B, T, 2D)
    """
    return torch.cat([values_scaled, scale.log().expand_as(values_scaled)], dim=-1)


class TimeMCL(nn.Module):
    """LSTM encoder + K hypothesis heads (whole horizon, all dims) + K score heads (paper Sec. 3, Fig. 1).

    The heads read the last hidden state of the encoder and emit full trajectories in one
    forward pass (the quantisation view of Sec. 4 is over whole future paths). The authors'
    code instead attaches per-step heads to an autoregressive DeepAR/TimeGrad backbone and
    unrolls each head on its own outputs at inference; the WTA winner is still picked over
    the whole window. Single linear heads, as in their config (single_linear_layer=True).

    `linear_skip` (not in the paper) adds to head k a linear function of the scaled context,
    shared by the D dims (an LSTNet-style highway, C -> H per head, zero-initialised). It stands
    in for the lag features (lags 1, 24, 168, ... for hourly data) the authors feed their RNN:
    without it a 2x40 LSTM needs far more than a few hundred steps to read a daily cycle off
    the raw context, and the heads settle as an unconditional quantizer of the futures.
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.encoder = nn.LSTM(2 * cfg.dim, cfg.hidden, num_layers=cfg.layers, batch_first=True)
        # K linear heads stacked into one matmul: identical to K separate nn.Linear heads
        self.hyp_heads = nn.Linear(cfg.hidden, cfg.n_hypotheses * cfg.horizon * cfg.dim)
        self.score_heads = nn.Linear(cfg.hidden, cfg.n_hypotheses)
        self.skip = None
        if cfg.linear_skip:
            self.skip = nn.Linear(cfg.context_length, cfg.n_hypotheses * cfg.horizon)
            nn.init.zeros_(self.skip.weight)
            nn.init.zeros_(self.skip.bias)

    def encode(self, context: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """context (B, C, D) -> last hidden state (B, hidden), scale (B, 1, D)."""
        assert context.dim() == 3 and context.shape[-1] == self.cfg.dim, (
            f"expected context (B, C, {self.cfg.dim}), got {tuple(context.shape)}")
        scale = mean_scale(context, self.cfg.scaling)
        out, _ = self.encoder(encoder_inputs(context / scale, scale))  # (B, C, hidden)
        return out[:, -1], scale

    def forward_scaled(self, context: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Hypotheses in scaled units (the loss is computed there, as in the authors' code).

        -> hyps_scaled (B, K, H, D), score_logits (B, K), scale (B, 1, D)
        """
        h, scale = self.encode(context)
        B, (K, H, D) = h.shape[0], (self.cfg.n_hypotheses, self.cfg.horizon, self.cfg.dim)
        hyps = self.hyp_heads(h).view(B, K, H, D)
        if self.skip is not None:
            lin = self.skip((context / scale).transpose(1, 2))  # (B, D, K*H)
            hyps = hyps + lin.view(B, D, K, H).permute(0, 2, 3, 1)
        return hyps, self.score_heads(h), scale

    def forward(self, context: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """context (B, C, D) -> hyps (B, K, H, D) in data units, score_logits (B, K)."""
        hyps, logits, scale = self.forward_scaled(context)
        return hyps * scale.unsqueeze(1), logits


class DeepARGaussian(nn.Module):
    """DeepAR-style baseline (Salinas et al. 2020): autoregressive LSTM, diagonal Gaussian per step.

    Same encoder size and mean scaling as TimeMCL. Trained by teacher-forced NLL over the
    context and the horizon; forecasts by ancestral sampling.
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.rnn = nn.LSTM(2 * cfg.dim, cfg.hidden, num_layers=cfg.layers, batch_first=True)
        self.proj = nn.Linear(cfg.hidden, 2 * cfg.dim)  # mean and pre-softplus std per dim

    def gaussian(self, out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """RNN outputs (B, T, hidden) -> mean, std (B, T, D), scaled units."""
        mu, s = self.proj(out).chunk(2, dim=-1)
        return mu, F.softplus(s) + 1e-4

    def nll(self, context: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Mean Gaussian NLL of x_t given x_<t over steps 2..C+H, teacher forced, in scaled units."""
        scale = mean_scale(context, self.cfg.scaling)  # (B, 1, D)
        series = torch.cat([context, target], dim=1) / scale  # (B, C+H, D)
        out, _ = self.rnn(encoder_inputs(series[:, :-1], scale))  # (B, C+H-1, hidden)
        mu, std = self.gaussian(out)
        y = series[:, 1:]
        return (0.5 * ((y - mu) / std).pow(2) + std.log() + 0.9189385332046727).mean()

    @torch.no_grad()
    def sample(self, context: torch.Tensor, n_samples: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """Ancestral sampling: context (B, C, D) -> samples (B, n_samples, H, D) in data units."""
        B, C, D = context.shape
        scale = mean_scale(context, self.cfg.scaling)
        x = (context / scale).repeat_interleave(n_samples, dim=0)  # (B*S, C, D)
        scale_r = scale.repeat_interleave(n_samples, dim=0)  # (B*S, 1, D)
        state = None
        if C > 1:  # warm up on the context; its last value is the first input of the decoder
            _, state = self.rnn(encoder_inputs(x[:, :-1], scale_r))
        last = x[:, -1:]  # (B*S, 1, D)
        steps = []
        for _ in range(self.cfg.horizon):
            out, state = self.rnn(encoder_inputs(last, scale_r), state)
            mu, std = self.gaussian(out)  # (B*S, 1, D)
            noise = torch.randn(mu.shape, generator=generator, dtype=mu.dtype, device=mu.device)
            last = mu + std * noise
            steps.append(last)
        paths = torch.cat(steps, dim=1) * scale_r  # (B*S, H, D)
        return paths.view(B, n_samples, self.cfg.horizon, D)


def seasonal_naive(context: torch.Tensor, horizon: int, season: int) -> torch.Tensor:
    """Repeat the last `season` observed steps: context (B, C, D) -> (B, 1, H, D)."""
    B, C, D = context.shape
    if not 1 <= season <= C:
        raise ValueError(f"seasonal_naive: season={season} must be between 1 and the context length {C}")
    idx = C - season + torch.arange(horizon) % season  # (H,)
    return context[:, idx].unsqueeze(1)


def count_parameters(module: nn.Module) -> int:
    """Number of trainable scalars."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
