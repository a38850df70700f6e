"""Guided proposals and the neural guided diffusion bridge (Yang, van der Meulen, Sommer, ICML 2025).

* Guided proposal (Section 3): drift f + a r~ with r~(t, x) = F(t) - H(t) x from the backward filter;
  its likelihood ratio to the true bridge is exp(int_0^T G(t, X_t) dt) up to p~/p with
  G = (f - f~)^T r~ - 1/2 tr[(a - a~)(H - r~ r~^T)].
* Neural bridge (Section 4): drift f + a r~ + sigma theta(t, x). Its variational loss (the KL between
  the proposal path measure and the bridge, up to the constant log p - log p~):
      L(theta) = E[ sum_k (1/2 |theta(t_k, X_k)|^2 - G(t_k, X_k)) dt_k ],
  simulated by Euler-Maruyama with reparameterised noise and differentiated through the whole path;
  theta and G are evaluated at the left point of every step (official code). Its minimum over all
  theta is log p~(v | x0) - log p(v | x0), reached by theta* = sigma^T (grad log p - grad log p~).
* Training as the official `trainer.py`: clip the global gradient norm at 1, Adam(lr), then an
  exponential moving average of the *updates* (optax.ema(0.995), debiased), best checkpoint by the
  loss averaged over windows of `best_window` iterations.

Device: a problem built with `device=` (the job's, `methods.common.device.job_device`) keeps its grid
tensors there; noise is drawn on the CPU from the seeds' generators and moved, so a seed's draws do not
depend on the device, and every result that leaves this module (samples, losses) comes back on the CPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
import torch
from torch import nn

from .filter import FilterGrid, backward_filter
from .sde import Diffusion, LinearAuxiliary, brownian_increments, time_grid


@dataclass
class BridgeProblem:
    """Condition X_0 = x0, v = X_T + N(0, eps^2 I) for `diffusion`, guided by `aux`."""

    diffusion: Diffusion
    aux: LinearAuxiliary
    x0: torch.Tensor  # (d,)
    v: torch.Tensor  # (d,)
    T: float
    n_steps: int
    eps: float
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    filt: FilterGrid = field(init=False)

    def __post_init__(self):
        d = self.diffusion.dim
        self.ts = time_grid(self.T, self.n_steps)
        eye = torch.eye(d, dtype=torch.float64)
        # the filter runs once, in float64 on the CPU; the simulation's float32 copies live on `device`
        self.filt = backward_filter(self.aux, self.ts, eye, self.eps**2 * eye, self.v.to(torch.float64))
        f32, dev = torch.float32, self.device
        self.H32 = self.filt.H.to(dev, f32)
        self.F32 = self.filt.F.to(dev, f32)
        self.a32 = self.diffusion.a.to(dev, f32)
        self.sigma32 = self.diffusion.sigma.to(dev, f32)
        self.da32 = (self.diffusion.a - self.aux.a).to(dev, f32)
        self.B32 = self.aux.B.to(dev, f32)
        self.beta32 = self.aux.beta.to(dev, f32)
        self.trace_term = torch.einsum("ij,kji->k", self.da32, self.H32)  # tr[(a - a~) H(t_k)]
        self.aux_has_drift = bool(self.aux.B.abs().max() > 0 or self.aux.beta.abs().max() > 0)
        self.a_differs = bool(self.da32.abs().max() > 0)
        self.dts = torch.diff(self.ts).tolist()
        self.tl = self.ts.tolist()

    @property
    def dim(self) -> int:
        return self.diffusion.dim

    def log_ptilde(self) -> float:
        return self.filt.log_ptilde(self.x0)


def guided_terms(problem: BridgeProblem, k: int, t: float, x: torch.Tensor):
    """(f(t_k, x), r~(t_k, x), G(t_k, x)) at grid point k; x (..., d), G (...)."""
    f = problem.diffusion.drift(t, x)
    r = problem.F32[k] - x @ problem.H32[k]  # H symmetric
    ftil = x @ problem.B32.T + problem.beta32 if problem.aux_has_drift else 0.0
    G = ((f - ftil) * r).sum(-1)
    if problem.a_differs:
        G = G - 0.5 * (problem.trace_term[k] - ((r @ problem.da32) * r).sum(-1))
    return f, r, G


Theta = Callable[[float, torch.Tensor], torch.Tensor]


def simulate_bridge(problem: BridgeProblem, dW: torch.Tensor, theta: Optional[Theta] = None):
    """Euler-Maruyama of the guided proposal (theta None) or of the neural bridge.

    dW (..., N, d) -> (path (..., N+1, d), int G dt (...), int 1/2 |theta|^2 dt (...)), left-point sums.
    """
    x = problem.x0.to(dW).expand(*dW.shape[:-2], problem.dim)
    noise = dW @ problem.sigma32.T
    ll = torch.zeros(dW.shape[:-2], dtype=dW.dtype, device=dW.device)
    energy = torch.zeros(dW.shape[:-2], dtype=dW.dtype, device=dW.device)
    path = [x]
    for k, dt in enumerate(problem.dts):
        t = problem.tl[k]
        f, r, G = guided_terms(problem, k, t, x)
        drift = f + r @ problem.a32
        ll = ll + G * dt
        if theta is not None:
            th = theta(t, x)
            drift = drift + th @ problem.sigma32.T
            energy = energy + (0.5 * dt) * (th * th).sum(-1)
        x = x + drift * dt + noise[..., k, :]
        path.append(x)
    return torch.stack(path, -2), ll, energy


def simulate_forward(problem: BridgeProblem, dW: torch.Tensor) -> torch.Tensor:
    """The unconditioned process by Euler-Maruyama on the same grid (the cost reference)."""
    x = problem.x0.to(dW).expand(*dW.shape[:-2], problem.dim)
    noise = dW @ problem.sigma32.T
    path = [x]
    for k, dt in enumerate(problem.dts):
        x = x + problem.diffusion.drift(problem.tl[k], x) * dt + noise[..., k, :]
        path.append(x)
    return torch.stack(path, -2)


# ---- network ----------------------------------------------------------------------------------

ACTIVATIONS = {
    "lipswish": lambda h: 0.909 * torch.nn.functional.silu(h),  # official OU and cell scripts
    "tanh": torch.tanh,  # official Brownian script
}
# flax's kaiming_normal is a truncated normal on [-2, 2] rescaled by this constant to keep variance 2 / fan_in
_TRUNC_STD = 0.87962566103423978


def truncated_kaiming(n_in: int, n_out: int, g: torch.Generator) -> torch.Tensor:
    """Weights (n_in, n_out) as flax's `kaiming_normal()`: variance_scaling(2, fan_in, truncated_normal),
    i.e. z ~ N(0, 1) truncated to [-2, 2] (redrawn outside), times sqrt(2 / n_in) / 0.8796."""
    z = torch.randn(n_in, n_out, generator=g)
    while True:
        bad = z.abs() > 2.0
        if not bad.any():
            break
        z[bad] = torch.randn(int(bad.sum()), generator=g)
    return z * (math.sqrt(2.0 / n_in) / _TRUNC_STD)


class EnsembleMLP(nn.Module):
    """S independent MLPs theta_s(t, x), one per seed, evaluated in one batched call.

    Each member is the official `MLPSmall` (Section 5's network): (t, x) concatenated -> input layer
    Linear(d + 1, h_1) with no activation -> [Linear(h_{i-1}, h_i), activation] for i >= 2 ->
    Linear(h_last, out_dim). Weights truncated-normal Kaiming (`truncated_kaiming`), biases zero.
    Member s is initialised from torch.Generator().manual_seed(seeds[s]), so it does not depend on
    which other seeds run with it. x has shape (S, B, d); the output (S, B, out_dim).
    """

    def __init__(
        self, seeds: list[int], dim: int, hidden: list[int], out_dim: Optional[int] = None, activation: str = "lipswish"
    ):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation {activation!r} is not one of {sorted(ACTIVATIONS)}")
        self.activation = activation
        self.act = ACTIVATIONS[activation]
        widths = [dim + 1, *hidden, out_dim or dim]
        Ws = [[] for _ in widths[1:]]
        for seed in seeds:
            g = torch.Generator().manual_seed(int(seed))
            for i, (n_in, n_out) in enumerate(zip(widths[:-1], widths[1:])):
                Ws[i].append(truncated_kaiming(n_in, n_out, g))
        self.weights = nn.ParameterList([nn.Parameter(torch.stack(w)) for w in Ws])  # (S, in, out)
        self.biases = nn.ParameterList([nn.Parameter(torch.zeros(len(seeds), 1, w[0].shape[1])) for w in Ws])

    def forward(self, t: float | torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """t a float, or a tensor (S, B, 1) of per-point times."""
        W0, b0 = self.weights[0], self.biases[0]
        if isinstance(t, torch.Tensor):
            h = torch.baddbmm(b0, x, W0[:, 1:, :]) + t * W0[:, :1, :]
        else:
            h = torch.baddbmm(b0 + t * W0[:, :1, :], x, W0[:, 1:, :])
        n_layers = len(self.weights)
        for i in range(1, n_layers):
            h = torch.baddbmm(self.biases[i], h, self.weights[i])
            if i < n_layers - 1:  # hidden layers after the input layer; the output layer is linear
                h = self.act(h)
        return h


# ---- variational loss and training ------------------------------------------------------------


def neural_bridge_loss(problem: BridgeProblem, theta: Theta, dW: torch.Tensor) -> torch.Tensor:
    """Per-path loss sum_k (1/2 |theta_k|^2 - G_k) dt (...); its mean is the variational objective."""
    _, ll, energy = simulate_bridge(problem, dW, theta)
    return energy - ll


@dataclass
class TrainConfig:
    n_iters: int
    batch: int
    lr: float
    clip_norm: float = 1.0
    update_ema: float = 0.995
    best_window: int = 100


def clip_per_member(params: list[torch.Tensor], max_norm: float) -> None:
    """clip_by_global_norm applied to each ensemble member (leading axis) separately."""
    sq = sum(p.grad.flatten(1).pow(2).sum(1) for p in params)  # (S,)
    scale = (max_norm / (sq.sqrt() + 1e-6)).clamp(max=1.0)
    for p in params:
        p.grad.mul_(scale.view(-1, *([1] * (p.dim() - 1))))


def train_ensemble(
    net: nn.Module,
    loss_fn: Callable[[int], torch.Tensor],
    cfg: TrainConfig,
    log: Callable[[str], None] = lambda s: None,
) -> np.ndarray:
    """Train the members of an ensemble independently (the optimiser is elementwise per member).

    loss_fn(it) returns the per-member losses (S,). Per member: clip its gradient norm at
    `clip_norm`, Adam(lr), EMA of the updates (optax.ema, debiased), and keep its parameters of the
    `best_window`-iteration window with the lowest mean loss. Returns the losses (n_iters, S).
    """
    params = list(net.parameters())
    opt = torch.optim.Adam(params, lr=cfg.lr)
    ema = [torch.zeros_like(p) for p in params]
    best_state = [p.detach().clone() for p in params]
    losses = []
    best, window_start = None, 0
    for it in range(1, cfg.n_iters + 1):
        member_losses = loss_fn(it)  # (S,)
        opt.zero_grad()
        member_losses.sum().backward()
        clip_per_member(params, cfg.clip_norm)
        before = [p.detach().clone() for p in params]
        opt.step()
        if cfg.update_ema > 0:
            with torch.no_grad():
                corr = 1.0 - cfg.update_ema**it
                for p, p0, m in zip(params, before, ema):
                    m.mul_(cfg.update_ema).add_(p - p0, alpha=1.0 - cfg.update_ema)
                    p.copy_(p0 + m / corr)
        losses.append(member_losses.detach().cpu().numpy().copy())
        if it - window_start == cfg.best_window or it == cfg.n_iters:
            # the parameters that produced this window's losses are those before this last update;
            # like the official trainer we keep the parameters at the end of the window
            mean = np.mean(losses[window_start:], axis=0)
            improved = np.ones_like(mean, dtype=bool) if best is None else mean < best
            best = mean if best is None else np.where(improved, mean, best)
            with torch.no_grad():
                for p, keep in zip(params, best_state):
                    mask = torch.as_tensor(improved, device=p.device)
                    keep[mask] = p.detach()[mask]
            log(f"iter {it}: window loss " + " ".join(f"{m:.4f}" for m in mean))
            window_start = it
    with torch.no_grad():
        for p, keep in zip(params, best_state):
            p.copy_(keep)
    return np.stack(losses)


def train_neural_bridge(
    problem: BridgeProblem,
    net: EnsembleMLP,
    cfg: TrainConfig,
    gens: list[torch.Generator],
    log: Callable[[str], None] = lambda s: None,
) -> np.ndarray:
    """Minimise the variational loss of every member; member s draws its noise from gens[s]."""

    def loss_fn(it):
        dW = increments_per_seed(gens, cfg.batch, problem)
        return neural_bridge_loss(problem, net, dW).mean(-1)

    return train_ensemble(net, loss_fn, cfg, log)


def increments_per_seed(gens: list[torch.Generator], batch: int, problem: BridgeProblem) -> torch.Tensor:
    """Brownian increments (S, batch, N, d), member s from its own (CPU) generator, on the problem's device."""
    return torch.stack([brownian_increments(batch, problem.ts, problem.dim, g) for g in gens]).to(problem.device)


@torch.no_grad()
def evaluate_loss(
    problem: BridgeProblem, theta: Optional[Theta], n_paths: int, gens: list[torch.Generator], chunk: int = 1000
) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo variational loss and its standard error per member (theta None: guided proposal)."""
    vals = []
    for start in range(0, n_paths, chunk):
        dW = increments_per_seed(gens, min(chunk, n_paths - start), problem)
        _, ll, energy = simulate_bridge(problem, dW, theta)
        vals.append(energy - ll)
    v = torch.cat(vals, -1).double().cpu()
    return v.mean(-1).numpy(), (v.std(-1) / math.sqrt(v.shape[-1])).numpy()


@torch.no_grad()
def sample_bridge(problem: BridgeProblem, theta: Optional[Theta], n: int, gens: list[torch.Generator]):
    """Independent bridge samples, paths (S, n, N+1, d), and their int G dt (S, n), on the CPU."""
    dW = increments_per_seed(gens, n, problem)
    path, ll, _ = simulate_bridge(problem, dW, theta)
    return path.cpu(), ll.cpu()
