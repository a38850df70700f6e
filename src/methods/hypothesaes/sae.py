"""Step 1 of HypotheSAEs: a TopK sparse autoencoder on text embeddings (paper Sec. 3.1; official sae.py).

z = ReLU(TopK(W_enc (x - b_pre) + b_enc)), x_hat = W_dec z + b_pre. The loss is the MSE normalised by the
MSE of the batch mean, plus aux_coef times the same normalised MSE of the auxiliary-K reconstruction of
the residual x - x_hat.detach() from the dead neurons' top aux_k pre-activations (Gao et al. 2024).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from methods.common.io import log


@dataclass(frozen=True)
class SAETrainConfig:
    lr: float = 5e-4
    batch_size: int = 512
    max_epochs: int = 100
    patience: int = 5
    clip_grad: float = 1.0
    aux_coef: float = 1.0 / 32
    dead_window: int = 256          # forward calls without firing after which a neuron is dead
    aux_k_multiplier: int = 2       # aux_k = multiplier * K (official default 2K)


class TopKSAE(nn.Module):
    def __init__(self, input_dim: int, m_total: int, k: int, b_pre: torch.Tensor | None = None):
        super().__init__()
        if not 1 <= k <= m_total:
            raise ValueError(f"TopK SAE: k={k} must be in [1, m_total={m_total}]")
        self.k, self.m_total = k, m_total
        w_dec = torch.empty(input_dim, m_total)
        nn.init.xavier_uniform_(w_dec)
        w_dec = F.normalize(w_dec, dim=0)                          # unit decoder columns
        self.W_dec = nn.Parameter(w_dec)                           # (d, M)
        self.W_enc = nn.Parameter(w_dec.t().clone())               # (M, d), tied at init only
        self.b_enc = nn.Parameter(torch.zeros(m_total))
        self.b_pre = nn.Parameter(b_pre.clone().float() if b_pre is not None else torch.zeros(input_dim))
        self.register_buffer("steps_since_active", torch.zeros(m_total, dtype=torch.long))

    def pre_activations(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.b_pre) @ self.W_enc.t() + self.b_enc      # (B, M)

    def topk_relu(self, pre: torch.Tensor, k: int) -> torch.Tensor:
        """TopK on the raw pre-activations, then ReLU (the official order: TopK before ReLU)."""
        vals, idx = pre.topk(k, dim=-1)
        return torch.zeros_like(pre).scatter(-1, idx, F.relu(vals))

    def forward(self, x: torch.Tensor):
        pre = self.pre_activations(x)
        z = self.topk_relu(pre, self.k)
        x_hat = z @ self.W_dec.t() + self.b_pre
        self._update_dead(z)
        return x_hat, z, pre

    @torch.no_grad()
    def _update_dead(self, z: torch.Tensor) -> None:
        fired = (z > 0).any(dim=0)
        self.steps_since_active += 1
        self.steps_since_active[fired] = 0

    def dead_mask(self, window: int) -> torch.Tensor:
        return self.steps_since_active > window

    @torch.no_grad()
    def encode(self, x: torch.Tensor, batch: int = 4096) -> torch.Tensor:
        """Activations z for a whole matrix (no dead-neuron bookkeeping)."""
        return torch.cat([self.topk_relu(self.pre_activations(x[i:i + batch]), self.k)
                          for i in range(0, len(x), batch)])

    @torch.no_grad()
    def renormalise_decoder(self) -> None:
        self.W_dec.data = F.normalize(self.W_dec.data, dim=0)

    @torch.no_grad()
    def project_decoder_grad(self) -> None:
        """Remove the gradient component parallel to each unit decoder column (keeps norms at 1)."""
        if self.W_dec.grad is not None:
            w = self.W_dec.data
            self.W_dec.grad -= w * (self.W_dec.grad * w).sum(0, keepdim=True)


def normalised_mse(x_hat: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """MSE(x_hat, x) / MSE(batch mean, x): 1 for predicting the batch mean, 0 for perfect rebuilding."""
    baseline = (x - x.mean(0, keepdim=True)).pow(2).mean()
    return (x_hat - x).pow(2).mean() / baseline.clamp_min(1e-12)


def sae_loss(sae: TopKSAE, x: torch.Tensor, cfg: SAETrainConfig):
    """Normalised reconstruction loss plus the auxiliary-K dead-neuron loss; returns (total, recon, aux)."""
    x_hat, z, pre = sae(x)
    recon = normalised_mse(x_hat, x)
    dead = sae.dead_mask(cfg.dead_window)
    aux = torch.zeros((), dtype=x.dtype)
    n_dead = int(dead.sum())
    if cfg.aux_coef > 0 and n_dead > 0:
        aux_k = min(cfg.aux_k_multiplier * sae.k, n_dead)
        masked = pre.masked_fill(~dead, float("-inf"))
        z_aux = sae.topk_relu(masked, aux_k).nan_to_num(0.0)
        residual = x - x_hat.detach()
        aux = normalised_mse(z_aux @ sae.W_dec.t(), residual)
        if not torch.isfinite(aux):
            aux = torch.zeros((), dtype=x.dtype)
    return recon + cfg.aux_coef * aux, recon, aux


def train_sae(x_train: np.ndarray, x_val: np.ndarray, m_total: int, k: int, cfg: SAETrainConfig,
              seed: int) -> tuple[TopKSAE, dict]:
    """Adam on the SAE loss with decoder-gradient projection, clipping, renormalisation and early stopping."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    xt = torch.as_tensor(x_train, dtype=torch.float32)
    xv = torch.as_tensor(x_val, dtype=torch.float32)
    sae = TopKSAE(xt.shape[1], m_total, k, b_pre=xt.median(dim=0).values)
    opt = torch.optim.Adam(sae.parameters(), lr=cfg.lr)
    best, best_state, bad, history = math.inf, None, 0, []
    for epoch in range(cfg.max_epochs):
        sae.train()
        perm = torch.randperm(len(xt), generator=gen)
        for start in range(0, len(xt), cfg.batch_size):
            loss, _, _ = sae_loss(sae, xt[perm[start:start + cfg.batch_size]], cfg)
            opt.zero_grad()
            loss.backward()
            sae.project_decoder_grad()
            torch.nn.utils.clip_grad_norm_(sae.parameters(), cfg.clip_grad)
            opt.step()
            sae.renormalise_decoder()
        sae.eval()
        with torch.no_grad():
            val_loss = float(sae_loss(sae, xv, cfg)[0])      # validation forwards count for dead neurons too
        history.append(val_loss)
        if val_loss < best - 1e-6:
            best, bad = val_loss, 0
            best_state = {n: t.clone() for n, t in sae.state_dict().items()}
        else:
            bad += 1
            if bad >= cfg.patience:
                break
    sae.load_state_dict(best_state)
    with torch.no_grad():
        z = sae.encode(xt)
        recon = float(normalised_mse(z @ sae.W_dec.t() + sae.b_pre, xt))
    info = {"m_total": m_total, "k": k, "epochs": len(history), "best_val_loss": best,
            "train_normalised_mse": recon, "dead_fraction": float(((z > 0).sum(0) == 0).float().mean())}
    log(f"SAE ({m_total},{k}) seed {seed}: {info['epochs']} epochs, val loss {best:.4f}, "
        f"dead {info['dead_fraction']:.2f}")
    return sae, info


def sae_features(splits: dict[str, np.ndarray], sizes: list[tuple[int, int]], cfg: SAETrainConfig,
                 seed: int) -> tuple[dict[str, np.ndarray], list[dict]]:
    """Train one SAE per (M, K) in `sizes` and concatenate their activations (official Headlines setup)."""
    feats, infos = {s: [] for s in splits}, []
    for i, (m, k) in enumerate(sizes):
        sae, info = train_sae(splits["train"], splits["val"], m, k, cfg, seed=seed * 1000 + i)
        infos.append(info)
        for s, x in splits.items():
            feats[s].append(sae.encode(torch.as_tensor(x, dtype=torch.float32)).numpy())
    return {s: np.concatenate(v, axis=1) for s, v in feats.items()}, infos
