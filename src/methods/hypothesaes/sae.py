"""Step 1 of HypotheSAEs: a TopK sparse autoencoder on text embeddings (paper Sec. 3.1; official sae.py).

z = ReLU(TopK(W_enc (x - b_pre) + b_enc)), x_hat = W_dec z + b_pre. The loss is the MSE normalised by the
MSE of the batch mean, plus aux_coef times the same normalised MSE of the auxiliary-K reconstruction of
the residual x - x_hat.detach() from the dead neurons' top aux_k pre-activations (Gao et al. 2024).

Training follows the official `SparseAutoencoder.fit` (rmovva/HypotheSAEs @706d897): the auxiliary term
is always part of the loss (with no dead neuron it rebuilds the residual from zeros: no gradient, but it
is in the reported and early-stopping losses); the validation loss is the mean of per-batch losses over
batches of `batch_size`; early stopping when the validation loss has not improved on its best for
`patience` epochs, keeping the weights of the last epoch (`restore_best: true` keeps the best epoch's
weights instead, an option). tests/hypothesaes/test_parity.py compares all of it with the official code.
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
    patience: int = 3  # official train_sae default (the paper's reproduction notebook passes 5)
    clip_grad: float = 1.0
    aux_coef: float = 1.0 / 32
    dead_window: int = 256  # forward calls without firing after which a neuron is dead
    aux_k_multiplier: int = 2  # aux_k = min(multiplier * K, M) (official default 2K)
    restore_best: bool = False  # official: keep the last epoch; true: restore the best validation epoch


class TopKSAE(nn.Module):
    def __init__(self, input_dim: int, m_total: int, k: int, b_pre: torch.Tensor | None = None):
        super().__init__()
        if not 1 <= k <= m_total:
            raise ValueError(f"TopK SAE: k={k} must be in [1, m_total={m_total}]")
        self.k, self.m_total = k, m_total
        w_dec = torch.empty(input_dim, m_total)
        nn.init.xavier_uniform_(w_dec)
        w_dec = F.normalize(w_dec, dim=0)  # unit decoder columns
        self.W_dec = nn.Parameter(w_dec)  # (d, M)
        self.W_enc = nn.Parameter(w_dec.t().clone())  # (M, d), tied at init only
        self.b_enc = nn.Parameter(torch.zeros(m_total))
        self.b_pre = nn.Parameter(b_pre.clone().float() if b_pre is not None else torch.zeros(input_dim))
        self.register_buffer("steps_since_active", torch.zeros(m_total, dtype=torch.long))

    def pre_activations(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.b_pre) @ self.W_enc.t() + self.b_enc  # (B, M)

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
        return torch.cat(
            [self.topk_relu(self.pre_activations(x[i : i + batch]), self.k) for i in range(0, len(x), batch)]
        )

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


def aux_k_loss(
    sae: TopKSAE, x: torch.Tensor, x_hat: torch.Tensor, pre: torch.Tensor, cfg: SAETrainConfig
) -> torch.Tensor:
    """Auxiliary-K loss (Gao et al. 2024, official compute_loss): live neurons' pre-activations zeroed, the top
    aux_k = min(multiplier K, M) of the rest through the ReLU rebuild the residual x - x_hat.detach(). With no
    dead neuron (or none with a positive pre-activation) the rebuild is 0 and the term is the normalised MSE
    of predicting 0: no gradient, but part of the loss value, as in the official code."""
    dead = sae.dead_mask(cfg.dead_window).to(pre.dtype)
    aux_k = min(cfg.aux_k_multiplier * sae.k, sae.m_total)
    z_aux = sae.topk_relu(pre * dead, aux_k)
    return normalised_mse(z_aux @ sae.W_dec.t(), x - x_hat.detach())


def sae_loss(sae: TopKSAE, x: torch.Tensor, cfg: SAETrainConfig):
    """Normalised reconstruction loss plus aux_coef times the auxiliary-K loss; returns (total, recon, aux)."""
    x_hat, z, pre = sae(x)
    recon = normalised_mse(x_hat, x)
    aux = aux_k_loss(sae, x, x_hat, pre, cfg)
    return recon + cfg.aux_coef * aux, recon, aux


def validation_loss(sae: TopKSAE, xv: torch.Tensor, cfg: SAETrainConfig) -> float:
    """Mean of the per-batch losses over batches of batch_size (official fit); each forward counts for the
    dead-neuron bookkeeping, as there."""
    with torch.no_grad():
        losses = [float(sae_loss(sae, xv[i : i + cfg.batch_size], cfg)[0]) for i in range(0, len(xv), cfg.batch_size)]
    return float(np.mean(losses))


def fit_sae(sae: TopKSAE, xt: torch.Tensor, xv: torch.Tensor, cfg: SAETrainConfig, gen: torch.Generator) -> dict:
    """The official training loop on an initialised SAE: per batch the loss, decoder-gradient projection,
    clipping, Adam, renormalisation; per epoch the validation loss and early stopping (see module docstring).
    Returns the per-epoch train and validation losses."""
    opt = torch.optim.Adam(sae.parameters(), lr=cfg.lr)
    best, best_state, bad = math.inf, None, 0
    history = {"train_loss": [], "val_loss": []}
    for _ in range(cfg.max_epochs):
        sae.train()
        perm = torch.randperm(len(xt), generator=gen)
        losses = []
        for start in range(0, len(xt), cfg.batch_size):
            loss, _, _ = sae_loss(sae, xt[perm[start : start + cfg.batch_size].to(xt.device)], cfg)
            opt.zero_grad()
            loss.backward()
            sae.project_decoder_grad()
            torch.nn.utils.clip_grad_norm_(sae.parameters(), cfg.clip_grad)
            opt.step()
            sae.renormalise_decoder()
            losses.append(float(loss.detach()))
        sae.eval()
        history["train_loss"].append(float(np.mean(losses)))
        val_loss = validation_loss(sae, xv, cfg)
        history["val_loss"].append(val_loss)
        if val_loss < best:
            best, bad = val_loss, 0
            if cfg.restore_best:
                best_state = {n: t.clone() for n, t in sae.state_dict().items()}
        else:
            bad += 1
            if bad >= cfg.patience:
                break
    if cfg.restore_best and best_state is not None:
        sae.load_state_dict(best_state)
    return history


def train_sae(
    x_train: np.ndarray, x_val: np.ndarray, m_total: int, k: int, cfg: SAETrainConfig, seed: int, device="cpu"
) -> tuple[TopKSAE, dict]:
    """A TopK SAE initialised as the official one (median pre-bias, unit xavier decoder, tied encoder) and
    trained by `fit_sae` on `device` (the job's: a GPU at paper scale). Initialisation and the shuffling
    generator stay on the CPU, so a seed gives the same initial weights and batch order on every device."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    xt = torch.as_tensor(x_train, dtype=torch.float32)
    xv = torch.as_tensor(x_val, dtype=torch.float32)
    sae = TopKSAE(xt.shape[1], m_total, k, b_pre=xt.median(dim=0).values).to(device)
    xt, xv = xt.to(device), xv.to(device)
    history = fit_sae(sae, xt, xv, cfg, gen)
    with torch.no_grad():
        z = sae.encode(xt)
        recon = float(normalised_mse(z @ sae.W_dec.t() + sae.b_pre, xt))
    info = {
        "m_total": m_total,
        "k": k,
        "epochs": len(history["val_loss"]),
        "best_val_loss": min(history["val_loss"]),
        "final_val_loss": history["val_loss"][-1],
        "restore_best": cfg.restore_best,
        "train_normalised_mse": recon,
        "dead_fraction": float(((z > 0).sum(0) == 0).float().mean()),
    }
    log(
        f"SAE ({m_total},{k}) seed {seed}: {info['epochs']} epochs, val loss best {info['best_val_loss']:.4f} "
        f"final {info['final_val_loss']:.4f}, dead {info['dead_fraction']:.2f}"
    )
    return sae, info


def sae_features(
    splits: dict[str, np.ndarray], sizes: list[tuple[int, int]], cfg: SAETrainConfig, seed: int, device="cpu"
) -> tuple[dict[str, np.ndarray], list[dict]]:
    """Train one SAE per (M, K) in `sizes` (on `device`) and concatenate their activations (official
    Headlines setup)."""
    feats, infos = {s: [] for s in splits}, []
    for i, (m, k) in enumerate(sizes):
        sae, info = train_sae(splits["train"], splits["val"], m, k, cfg, seed=seed * 1000 + i, device=device)
        infos.append(info)
        for s, x in splits.items():
            feats[s].append(sae.encode(torch.as_tensor(x, dtype=torch.float32, device=device)).cpu().numpy())
    return {s: np.concatenate(v, axis=1) for s, v in feats.items()}, infos
