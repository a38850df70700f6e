"""Conditional denoising diffusion over transition vectors (s, a, r, s', done) with classifier-free guidance.

* Denoiser: an MLP on [x_t, sinusoidal features of t, one-hot label] predicting the noise (SynthER denoises
  transition vectors with a residual MLP; here a plain ensemble MLP, see README).
* Labels: 0 = offline, 1 = online, 2 = null. Training replaces the label by null with probability p_uncond
  (CFDG's label dropout); p_uncond = 1 gives an unconditional (SynthER-style) model with the same code.
* Guided noise (CFDG, classifier-free guidance): eps~ = (1 + w) eps(z, c) - w eps(z, null); w = 0 is the plain
  conditional model.
* Noise schedule: cosine (Nichol & Dhariwal), ancestral DDPM sampling with the predicted x0 clipped (SynthER
  samples with EDM's deterministic-plus-churn sampler instead; see README).
* Normalisation: per dimension to zero mean and unit variance, except the done flag, which is modelled raw and
  thresholded at 0.5 after sampling (SynthER).
* Device: the denoiser and the training data live on `device` (the job's; the CPU by default); every random
  draw comes from the CPU generator and is moved there, so a seed's model does not depend on the device.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .nets import EnsembleMLP

OFFLINE, ONLINE, NULL = 0, 1, 2
N_LABELS = 3


def cosine_alpha_bar(n_steps: int, s: float = 0.008) -> torch.Tensor:
    """Cumulative products alpha_bar_t, t = 1..T, of the cosine schedule (betas capped at 0.999)."""
    t = torch.arange(n_steps + 1, dtype=torch.float64) / n_steps
    f = torch.cos((t + s) / (1 + s) * math.pi / 2) ** 2
    betas = (1 - f[1:] / f[:-1]).clamp(max=0.999)
    return torch.cumprod(1 - betas, 0).float()


def time_features(t: torch.Tensor, n_steps: int, dim: int) -> torch.Tensor:
    """Sinusoidal features of the step index t (any shape) -> (*t.shape, dim)."""
    half = dim // 2
    freqs = torch.exp(-math.log(1000.0) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    ang = (t.float() / n_steps * 1000.0)[..., None] * freqs
    return torch.cat([torch.sin(ang), torch.cos(ang)], dim=-1)


class Normaliser:
    """Per-member, per-dimension standardisation; the last (done) column stays raw."""

    def __init__(self, mean: np.ndarray, std: np.ndarray, device: torch.device | None = None):
        self.mean = torch.as_tensor(mean, dtype=torch.float32, device=device)[:, None, :]  # (E, 1, D)
        self.std = torch.as_tensor(std, dtype=torch.float32, device=device)[:, None, :]

    @classmethod
    def fit(cls, datasets: list[np.ndarray], device: torch.device | None = None) -> "Normaliser":
        mean = np.stack([d.mean(0) for d in datasets])
        std = np.stack([d.std(0) for d in datasets]) + 1e-3
        mean[:, -1], std[:, -1] = 0.0, 1.0
        return cls(mean, std, device)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.mean) / self.std

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        return z * self.std + self.mean


class TransitionDiffusion:
    """E independent conditional diffusion models over D-dimensional transition vectors."""

    def __init__(
        self, n_members: int, dim: int, cfg: dict, generator: torch.Generator, device: torch.device | None = None
    ):
        self.E, self.D, self.cfg = n_members, dim, cfg
        self.device = device or torch.device("cpu")
        self.T = int(cfg["n_steps"])
        self.tdim = int(cfg["time_dim"])
        self.alpha_bar = cosine_alpha_bar(self.T).to(self.device)
        self.net = EnsembleMLP(
            n_members, dim + self.tdim + N_LABELS, list(cfg["hidden"]), dim, generator, act=torch.nn.SiLU
        ).to(self.device)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=float(cfg["lr"]))
        self.gen = generator
        self.norm: Normaliser | None = None

    def eps(self, z: torch.Tensor, t: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
        """Predicted noise; z (E, B, D), t (E, B) int, label (E, B) int."""
        onehot = torch.nn.functional.one_hot(label, N_LABELS).float()
        return self.net(torch.cat([z, time_features(t, self.T, self.tdim), onehot], dim=-1))

    def guided_eps(self, z: torch.Tensor, t: torch.Tensor, label: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """Classifier-free guidance: (1 + w) eps(z, c) - w eps(z, null); w (E,) per member."""
        cond = self.eps(z, t, label)
        if not bool((w != 0).any()):
            return cond
        uncond = self.eps(z, t, torch.full_like(label, NULL))
        w = w[:, None, None]
        return (1 + w) * cond - w * uncond

    def loss(self, x0: torch.Tensor, label: torch.Tensor, p_uncond: torch.Tensor) -> torch.Tensor:
        """Denoising loss: mean over batch and dims of ||eps - eps_theta(x_t, t, c')||^2, summed over members;
        c' = null with probability p_uncond[e]."""
        E, B, _ = x0.shape
        dev = self.device
        t = torch.randint(0, self.T, (E, B), generator=self.gen).to(dev)
        noise = torch.randn(x0.shape, generator=self.gen).to(dev)
        ab = self.alpha_bar[t][..., None]
        zt = ab.sqrt() * x0 + (1 - ab).sqrt() * noise
        drop = torch.rand((E, B), generator=self.gen).to(dev) < p_uncond[:, None]
        label = torch.where(drop, torch.full_like(label, NULL), label)
        return ((self.eps(zt, t, label) - noise) ** 2).mean(dim=(1, 2)).sum()

    def fit(
        self,
        datasets: list[np.ndarray],
        labels: list[np.ndarray],
        p_uncond: np.ndarray,
        n_iters: int,
        batch: int,
        rng: np.random.Generator,
        refit_normaliser: bool = True,
    ) -> list[float]:
        """Train member e on (datasets[e], labels[e]) for n_iters Adam steps (warm start if already trained)."""
        if refit_normaliser or self.norm is None:
            self.norm = Normaliser.fit(datasets, self.device)
        dev = self.device
        data = [torch.as_tensor(d, dtype=torch.float32, device=dev) for d in datasets]
        labs = [torch.as_tensor(lab, dtype=torch.long, device=dev) for lab in labels]
        p = torch.as_tensor(p_uncond, dtype=torch.float32, device=dev)
        losses = []
        for _ in range(n_iters):
            idx = [torch.as_tensor(rng.integers(0, len(d), batch), device=dev) for d in data]
            x0 = self.norm.encode(torch.stack([d[i] for d, i in zip(data, idx)]))
            lab = torch.stack([lab[i] for lab, i in zip(labs, idx)])
            loss = self.loss(x0, lab, p)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            losses.append(loss.item() / self.E)
        return losses

    @torch.no_grad()
    def sample(self, labels: np.ndarray, w: np.ndarray, noise_gen: torch.Generator | None = None) -> np.ndarray:
        """Ancestral DDPM sampling of len(labels[e]) transitions per member with guidance weight w[e];
        returns (E, n, D) in data units with the done column thresholded at 0.5."""
        gen, dev = noise_gen or self.gen, self.device
        lab = torch.as_tensor(labels, dtype=torch.long, device=dev)
        wt = torch.as_tensor(w, dtype=torch.float32, device=dev)
        E, n = lab.shape
        clip = float(self.cfg["clip_x0"])
        z = torch.randn((E, n, self.D), generator=gen).to(dev)
        ab = self.alpha_bar
        for i in reversed(range(self.T)):
            t = torch.full((E, n), i, dtype=torch.long, device=dev)
            e = self.guided_eps(z, t, lab, wt)
            ab_t = ab[i]
            ab_prev = ab[i - 1] if i > 0 else torch.tensor(1.0, device=dev)
            beta = 1 - ab_t / ab_prev
            # Posterior mean through the predicted x0, clipped to +-clip_x0 normalised units (DDPM's clipped
            # denoising): without the clip the first steps of the cosine schedule (beta near 0.999) amplify the
            # noise-prediction error ~30-fold and throw samples far off the data.
            x0 = ((z - (1 - ab_t).sqrt() * e) / ab_t.sqrt()).clamp(-clip, clip)
            mean = (ab_prev.sqrt() * beta * x0 + (1 - beta).sqrt() * (1 - ab_prev) * z) / (1 - ab_t)
            if i > 0:
                var = beta * (1 - ab_prev) / (1 - ab_t)
                z = mean + var.sqrt() * torch.randn(z.shape, generator=gen).to(dev)
            else:
                z = mean
        x = self.norm.decode(z).cpu().numpy()
        x[..., -1] = (x[..., -1] > 0.5).astype(x.dtype)
        return x
