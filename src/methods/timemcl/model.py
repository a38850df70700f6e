"""TimeMCL networks, the DeepAR-style Gaussian baseline, and seasonal naive.

Shapes: B windows, L = max(lags) extra history steps, C unrolled context steps, H horizon steps,
D series dimensions, K hypotheses, R = B*K (or B*S) rollout rows.

Every model reads a context tensor of L + C steps: the C steps the LSTM is unrolled over
(and the mean scale is computed over), plus the L steps before them that the lag features of
the first unrolled step look back to (GluonTS' history_length = context_length + max(lags)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from methods.common.config import check_keys

ZERO_SCALE = 1e-8  # a context whose mean |x| is below this is treated as all-zero


@dataclass
class ModelConfig:
    dim: int  # D, number of series modelled jointly
    context_length: int  # C, context steps the LSTM is unrolled over; the mean scale is taken over them
    horizon: int  # H, steps predicted
    hidden: int = 40  # LSTM cells per layer (paper/TimeGrad: 40)
    layers: int = 2  # LSTM layers (paper/TimeGrad: 2)
    n_hypotheses: int = 8  # K, prediction (and score) heads
    lags: tuple[int, ...] = (1,)  # autoregressive inputs x_{t-l}; strictly increasing, lag 1 first
    dropout: float = 0.1  # between LSTM layers (authors: dropout_rate 0.1)
    scaling: bool = True  # DeepAR mean scaling; off for toy processes that live around 0
    conditioning_length: int = 100  # shared Linear(hidden -> this) before the heads (authors); 0 = heads on the LSTM
    scale_feature: bool = False  # also feed log(scale) to the LSTM (DeepAR's static feature; the authors' do not)
    carry_state: bool = False  # rollout k+1 starts from rollout k's final LSTM state (the authors' loop)

    def __post_init__(self):
        self.lags = tuple(int(lag) for lag in self.lags)
        assert self.conditioning_length >= 0, (
            f"ModelConfig.conditioning_length must be >= 0, got {self.conditioning_length}"
        )
        for name in ("dim", "context_length", "horizon", "hidden", "layers", "n_hypotheses"):
            assert getattr(self, name) >= 1, f"ModelConfig.{name} must be >= 1, got {getattr(self, name)}"
        lags = self.lags
        assert len(lags) >= 1 and lags[0] == 1 and all(a < b for a, b in zip(lags, lags[1:])), (
            f"ModelConfig.lags must be strictly increasing and start with lag 1, got {lags}"
        )
        assert 0.0 <= self.dropout < 1.0, f"ModelConfig.dropout must lie in [0, 1), got {self.dropout}"

    @property
    def max_lag(self) -> int:
        return self.lags[-1]

    @property
    def history_length(self) -> int:
        """Steps of the context tensor every model reads: L + C."""
        return self.context_length + self.max_lag

    @classmethod
    def from_dict(cls, d: dict) -> "ModelConfig":
        """Build from a plain dict; unknown keys are an error, not silently dropped."""
        check_keys(cls, d)
        return cls(**d)


# --- scaling and inputs -------------------------------------------------------------------------


def mean_scale(context: torch.Tensor, enabled: bool = True) -> torch.Tensor:
    """DeepAR mean scaling (Salinas et al. 2020): per window and dim, scale = mean_t |x_t| over `context`.

    context (B, C, D) -> scale (B, 1, D). All-zero contexts get scale 1 (GluonTS falls back to a
    batch-wide default there; a per-window rule keeps predictions independent of the batch).
    """
    if not enabled:
        return torch.ones_like(context[:, :1, :])
    scale = context.abs().mean(dim=1, keepdim=True)  # (B, 1, D)
    return torch.where(scale > ZERO_SCALE, scale, torch.ones_like(scale))


def context_scale(context: torch.Tensor, cfg: ModelConfig) -> torch.Tensor:
    """Check a context tensor (B, L + C, D) and return its mean scale over the C unrolled steps (B, 1, D)."""
    assert context.dim() == 3 and tuple(context.shape[1:]) == (cfg.history_length, cfg.dim), (
        f"expected context (B, context_length + max(lags) = {cfg.context_length} + {cfg.max_lag}, {cfg.dim}), "
        f"got {tuple(context.shape)}"
    )
    return mean_scale(context[:, -cfg.context_length :], cfg.scaling)


def lagged_inputs(
    series: torch.Tensor, start: int, length: int, lags: tuple[int, ...], scale: torch.Tensor | None
) -> torch.Tensor:
    """LSTM inputs of the steps t in [start, start + length): x_{t-l} for l in lags, then log(scale)
    unless `scale` is None.

    `series` is already divided by `scale`. log(scale) is DeepAR's static real feature (the authors'
    network has none: ModelConfig.scale_feature). The lag features are ordered lag by lag (the
    authors' are dim by dim: a permutation of the LSTM's input columns, the same function class).
    series (B, T, D), scale (B, 1, D) -> (B, length, (len(lags) [+ 1]) D)
    """
    assert start - lags[-1] >= 0 and start + length - 1 <= series.shape[1], (
        f"steps [{start}, {start + length}) with lags up to {lags[-1]} need series steps "
        f"[{start - lags[-1]}, {start + length - 1}), series has {series.shape[1]}"
    )
    feats = [series[:, start - lag : start - lag + length] for lag in lags]  # len(lags) x (B, length, D)
    if scale is not None:
        feats.append(scale.log().expand(-1, length, -1))
    return torch.cat(feats, dim=-1)


def mean_sigmoid_logit(step_logits: torch.Tensor) -> torch.Tensor:
    """logit(mean_t sigmoid(s_t)) over the last axis, computed in log space (no overflow when p -> 1).

    The authors' score of a hypothesis is the time average of its per-step sigmoid score;
    returning its logit lets the callers keep working with logits. (..., T) -> (...)
    """
    log_t = math.log(step_logits.shape[-1])
    log_p = torch.logsumexp(F.logsigmoid(step_logits), dim=-1) - log_t  # log mean_t p_t
    log_q = torch.logsumexp(F.logsigmoid(-step_logits), dim=-1) - log_t  # log mean_t (1 - p_t) = log(1 - mean p)
    return log_p - log_q


def repeat_state(state: tuple[torch.Tensor, torch.Tensor], n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """LSTM state (layers, B, hidden) x2 -> (layers, B*n, hidden) x2, row b*n + j a copy of row b."""
    return tuple(s.repeat_interleave(n, dim=1) for s in state)


# --- backbone -----------------------------------------------------------------------------------


class LaggedLSTM(nn.Module):
    """DeepAR / TimeGrad backbone: an LSTM whose input at step t is (x_{t-l} / scale for l in lags, log scale).

    The output at step t is used to predict x_t, so teacher forcing over a window and an
    autoregressive rollout are the same recursion, fed with true or with predicted values.
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.rnn = nn.LSTM(
            (len(cfg.lags) + int(cfg.scale_feature)) * cfg.dim,
            cfg.hidden,
            num_layers=cfg.layers,
            batch_first=True,
            dropout=cfg.dropout if cfg.layers > 1 else 0.0,
        )

    def _feature(self, scale: torch.Tensor) -> torch.Tensor | None:
        return scale if self.cfg.scale_feature else None

    def teacher_forced(self, series: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        """series (B, L + T, D) scaled -> outputs (B, T, hidden); output t predicts series[:, L + t]."""
        L = self.cfg.max_lag
        out, _ = self.rnn(lagged_inputs(series, L, series.shape[1] - L, self.cfg.lags, self._feature(scale)))
        return out

    def encode(self, context: torch.Tensor, scale: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """context (B, L + C, D) scaled -> LSTM state after the C unrolled context steps."""
        _, state = self.rnn(
            lagged_inputs(context, self.cfg.max_lag, self.cfg.context_length, self.cfg.lags, self._feature(scale))
        )
        return state

    def step(self, past: torch.Tensor, scale: torch.Tensor, state) -> tuple[torch.Tensor, tuple]:
        """One step after the end of `past` (R, >= L, D) scaled: -> output (R, hidden), new state."""
        out, state = self.rnn(lagged_inputs(past, past.shape[1], 1, self.cfg.lags, self._feature(scale)), state)
        return out[:, 0], state


# --- TimeMCL ------------------------------------------------------------------------------------


class TimeMCL(nn.Module):
    """TimeMCL on real data (paper Sec. 3, Fig. 1; authors' tMCL network): autoregressive LSTM backbone,
    a shared Linear(hidden -> conditioning_length) (the authors' distribution-argument projection), then
    K per-step linear hypothesis heads (-> D) and K per-step score heads (-> 1, sigmoid).

    Training (`training_forward`): one teacher-forced LSTM pass over the C + H unrolled steps of the
    true series, every head applied at every step; a hypothesis' score is the time average of its
    per-step sigmoid. Inference (`forward`): after the context, hypothesis k is rolled out for H steps
    on its own predictions, every rollout starting from the same post-context state.
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.backbone = LaggedLSTM(cfg)
        width = cfg.conditioning_length or cfg.hidden
        self.proj = nn.Linear(cfg.hidden, width) if cfg.conditioning_length else nn.Identity()
        # K linear heads stacked into one matmul: identical to K separate nn.Linear(width, D) heads
        self.hyp_heads = nn.Linear(width, cfg.n_hypotheses * cfg.dim)
        self.score_heads = nn.Linear(width, cfg.n_hypotheses)

    def all_heads(self, out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Every head on every step: LSTM out (B, T, hidden) -> hyps (B, K, T, D), step score logits (B, K, T)."""
        B, T, _ = out.shape
        h = self.proj(out)
        hyps = self.hyp_heads(h).view(B, T, self.cfg.n_hypotheses, self.cfg.dim).permute(0, 2, 1, 3)
        return hyps, self.score_heads(h).transpose(1, 2)

    def own_heads(self, out: torch.Tensor, heads: slice = slice(None)) -> tuple[torch.Tensor, torch.Tensor]:
        """Row j through head heads[j] only: LSTM out (B, k, hidden) -> predictions (B, k, D), score logits (B, k)."""
        K, D = self.cfg.n_hypotheses, self.cfg.dim
        h = self.proj(out)
        w = self.hyp_heads.weight.view(K, D, -1)[heads]  # (k, D, width), head k = rows [kD, (k+1)D)
        y = torch.einsum("bkh,kdh->bkd", h, w) + self.hyp_heads.bias.view(K, D)[heads]
        s = (h * self.score_heads.weight[heads]).sum(-1) + self.score_heads.bias[heads]  # (B, k)
        return y, s

    def training_forward(self, context: torch.Tensor, target: torch.Tensor):
        """Teacher forcing over the unrolled context and the horizon, in scaled units (the loss lives there).

        context (B, L + C, D), target (B, H, D) -> hyps (B, K, C + H, D), score_logits (B, K),
        target_scaled (B, C + H, D): the values the hypotheses are compared with.
        """
        scale = context_scale(context, self.cfg)  # (B, 1, D)
        series = torch.cat([context, target], dim=1) / scale  # (B, L + C + H, D)
        hyps, step_logits = self.all_heads(self.backbone.teacher_forced(series, scale))
        return hyps, mean_sigmoid_logit(step_logits), series[:, self.cfg.max_lag :]

    def forward(self, context: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Rollouts: context (B, L + C, D) -> hyps (B, K, H, D) in data units, score_logits (B, K).

        The K rollouts run as B*K rows. Each starts from the same post-context LSTM state, unless
        cfg.carry_state (the authors' loop: rollout k+1 starts from rollout k's final state, see
        `_carried_rollouts`). score_logits = logit of the mean over the rollout steps of
        sigmoid(score head k).
        """
        B, K, D = context.shape[0], self.cfg.n_hypotheses, self.cfg.dim
        scale = context_scale(context, self.cfg)  # (B, 1, D)
        x = context / scale
        if self.cfg.carry_state:
            return self._carried_rollouts(x, scale)
        state = repeat_state(self.backbone.encode(x, scale), K)  # (layers, B*K, hidden) x2
        past = x[:, -self.cfg.max_lag :].repeat_interleave(K, dim=0)  # (B*K, L, D): all the lags ever read
        scale_rows = scale.repeat_interleave(K, dim=0)  # (B*K, 1, D)
        preds, logits = [], []
        for _ in range(self.cfg.horizon):
            out, state = self.backbone.step(past, scale_rows, state)  # (B*K, hidden)
            y, s = self.own_heads(out.view(B, K, -1))  # (B, K, D), (B, K)
            past = torch.cat([past[:, 1:], y.reshape(B * K, 1, D)], dim=1)  # feed back its own prediction
            preds.append(y)
            logits.append(s)
        hyps = torch.stack(preds, dim=2) * scale.unsqueeze(1)  # (B, K, H, D)
        return hyps, mean_sigmoid_logit(torch.stack(logits, dim=-1))

    def _carried_rollouts(self, x: torch.Tensor, scale: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The authors' sampling loop: hypothesis k is rolled out on its own predictions from the context,
        its LSTM state starting where hypothesis k-1's rollout ended (k = 0: the post-context state)."""
        state = self.backbone.encode(x, scale)
        hyps, logits = [], []
        for k in range(self.cfg.n_hypotheses):
            past = x[:, -self.cfg.max_lag :]
            ys, ss = [], []
            for _ in range(self.cfg.horizon):
                out, state = self.backbone.step(past, scale, state)  # (B, hidden)
                y, s = self.own_heads(out[:, None], slice(k, k + 1))  # (B, 1, D), (B, 1)
                past = torch.cat([past[:, 1:], y], dim=1)
                ys.append(y[:, 0])
                ss.append(s[:, 0])
            hyps.append(torch.stack(ys, dim=1))  # (B, H, D)
            logits.append(torch.stack(ss, dim=-1))  # (B, H)
        return torch.stack(hyps, dim=1) * scale.unsqueeze(1), mean_sigmoid_logit(torch.stack(logits, dim=1))


class TimeMCLOneShot(nn.Module):
    """TimeMCL for the synthetic processes (paper Sec. 4; the authors' toy network): K one-shot heads.

    An LSTM reads the whole context tensor; K linear heads map its last state to whole future paths
    (H x D each) and K score heads to one logit each. This is the trajectory quantizer the toy
    figure is about. The authors' toy network is an MLP on the conditioning values; ours reads
    the path so far with an LSTM.
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.encoder = nn.LSTM(
            2 * cfg.dim,
            cfg.hidden,
            num_layers=cfg.layers,
            batch_first=True,
            dropout=cfg.dropout if cfg.layers > 1 else 0.0,
        )
        self.hyp_heads = nn.Linear(cfg.hidden, cfg.n_hypotheses * cfg.horizon * cfg.dim)
        self.score_heads = nn.Linear(cfg.hidden, cfg.n_hypotheses)

    def forward_scaled(self, context: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """context (B, L + C, D) -> hyps_scaled (B, K, H, D), score_logits (B, K), scale (B, 1, D)."""
        scale = context_scale(context, self.cfg)
        x = context / scale
        out, _ = self.encoder(torch.cat([x, scale.log().expand_as(x)], dim=-1))  # (B, L + C, hidden)
        h = out[:, -1]
        hyps = self.hyp_heads(h).view(-1, self.cfg.n_hypotheses, self.cfg.horizon, self.cfg.dim)
        return hyps, self.score_heads(h), scale

    def training_forward(self, context: torch.Tensor, target: torch.Tensor):
        """-> hyps (B, K, H, D), score_logits (B, K), target_scaled (B, H, D): the loss is over the horizon."""
        hyps, logits, scale = self.forward_scaled(context)
        return hyps, logits, target / scale

    def forward(self, context: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """context (B, L + C, D) -> hyps (B, K, H, D) in data units, score_logits (B, K)."""
        hyps, logits, scale = self.forward_scaled(context)
        return hyps * scale.unsqueeze(1), logits


# --- baselines ----------------------------------------------------------------------------------


class DeepARGaussian(nn.Module):
    """DeepAR-style baseline (Salinas et al. 2020): TimeMCL's backbone with a diagonal Gaussian per step.

    Same lags, log-scale feature, LSTM and mean scaling as TimeMCL. Trained by teacher-forced NLL
    over the C + H unrolled steps; forecasts by ancestral sampling.
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.backbone = LaggedLSTM(cfg)
        self.proj = nn.Linear(cfg.hidden, 2 * cfg.dim)  # mean and pre-softplus std per dim

    def gaussian(self, out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """LSTM outputs (..., hidden) -> mean, std (..., D), scaled units."""
        mu, s = self.proj(out).chunk(2, dim=-1)
        return mu, F.softplus(s) + 1e-4

    def nll(self, context: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Mean Gaussian NLL of x_t given x_<t over the C + H unrolled steps, teacher forced, scaled units."""
        scale = context_scale(context, self.cfg)  # (B, 1, D)
        series = torch.cat([context, target], dim=1) / scale  # (B, L + C + H, D)
        mu, std = self.gaussian(self.backbone.teacher_forced(series, scale))  # (B, C + H, D) each
        y = series[:, self.cfg.max_lag :]
        return (0.5 * ((y - mu) / std).pow(2) + std.log() + 0.9189385332046727).mean()

    @torch.no_grad()
    def sample(self, context: torch.Tensor, n_samples: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """Ancestral sampling: context (B, L + C, D) -> samples (B, n_samples, H, D) in data units."""
        B, S, D = context.shape[0], n_samples, self.cfg.dim
        scale = context_scale(context, self.cfg)
        x = context / scale
        state = repeat_state(self.backbone.encode(x, scale), S)  # (layers, B*S, hidden) x2
        past = x[:, -self.cfg.max_lag :].repeat_interleave(S, dim=0)  # (B*S, L, D)
        scale_rows = scale.repeat_interleave(S, dim=0)
        steps = []
        for _ in range(self.cfg.horizon):
            out, state = self.backbone.step(past, scale_rows, state)  # (B*S, hidden)
            mu, std = self.gaussian(out)  # (B*S, D)
            # drawn on the CPU from the caller's generator, so a seed's samples do not depend on the device
            y = mu + std * torch.randn(mu.shape, generator=generator, dtype=mu.dtype).to(mu.device)
            past = torch.cat([past[:, 1:], y[:, None]], dim=1)
            steps.append(y)
        paths = torch.stack(steps, dim=1) * scale_rows  # (B*S, H, D)
        return paths.view(B, S, self.cfg.horizon, D)


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
