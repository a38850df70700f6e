"""Alignment metrics of Tjandrasuwita et al. (ICML 2025, Section 2.2; official `utils/align_metrics.py`
and `scripts/get_alignment.py`), rewritten from their definitions.

* mutual k-NN (Huh et al. 2024): for each sample, the fraction of its k nearest neighbours (inner
  product, self excluded) in representation A that are also among its k nearest neighbours in B,
  averaged over samples.
* unbiased CKA: linear kernels K = A A^T, L = B B^T, the unbiased HSIC estimator of Song et al. (2012,
  eq. 5), each HSIC clipped at 0, CKA = HSIC(K, L) / sqrt(HSIC(K, K) HSIC(L, L)).
Before either metric every row (sample) is L2-normalised; the alignment of two encoders is the
maximum over all pairs of their hidden layers ('best' in the official code).
"""

from __future__ import annotations

import numpy as np
import torch

METRICS = ("mutual_knn", "unbiased_cka")


def normalize_rows(x: torch.Tensor) -> torch.Tensor:
    """Each sample scaled to unit L2 norm (a zero row stays zero)."""
    return torch.nn.functional.normalize(x, dim=-1)


def nearest_neighbours(feats: torch.Tensor, k: int) -> torch.Tensor:
    """(N, k) indices of each row's k largest inner products, the row itself excluded."""
    if not 1 <= k < feats.shape[0]:
        raise ValueError(f"mutual k-NN needs 1 <= k < n_samples, got k={k}, n={feats.shape[0]}")
    sim = feats @ feats.T
    sim.fill_diagonal_(-float("inf"))
    return torch.topk(sim, k, dim=1).indices


def mutual_knn(a: torch.Tensor, b: torch.Tensor, k: int) -> float:
    """Mean over samples of |kNN_A(i) intersect kNN_B(i)| / k."""
    n = a.shape[0]
    mask_a = torch.zeros(n, n, dtype=torch.bool).scatter_(1, nearest_neighbours(a, k), True)
    mask_b = torch.zeros(n, n, dtype=torch.bool).scatter_(1, nearest_neighbours(b, k), True)
    return float((mask_a & mask_b).sum(dim=1).double().mean() / k)


def hsic_unbiased(K: torch.Tensor, L: torch.Tensor) -> torch.Tensor:
    """Unbiased HSIC (Song et al. 2012, eq. 5) of two n x n kernel matrices, n >= 4."""
    n = K.shape[0]
    if n < 4:
        raise ValueError(f"unbiased HSIC needs at least 4 samples, got {n}")
    Kt = K.clone().fill_diagonal_(0)
    Lt = L.clone().fill_diagonal_(0)
    term1 = torch.sum(Kt * Lt.T)
    term2 = Kt.sum() * Lt.sum() / ((n - 1) * (n - 2))
    term3 = 2.0 * torch.sum(Kt @ Lt) / (n - 2)
    return (term1 + term2 - term3) / (n * (n - 3))


def unbiased_cka(a: torch.Tensor, b: torch.Tensor) -> float:
    """Linear-kernel CKA with the unbiased HSIC; 0 when either self-HSIC is 0."""
    K = a @ a.T
    L = b @ b.T
    kl = torch.clamp(hsic_unbiased(K, L), min=0)
    kk = torch.clamp(hsic_unbiased(K, K), min=0)
    ll = torch.clamp(hsic_unbiased(L, L), min=0)
    denom = torch.sqrt(kk * ll)
    return 0.0 if float(denom) == 0.0 else float(kl / denom)


def alignment(a: torch.Tensor, b: torch.Tensor, metric: str, k: int) -> float:
    """One metric between two (N, d) representations of the same N samples, rows normalised first."""
    a = normalize_rows(a.double())
    b = normalize_rows(b.double())
    if metric == "mutual_knn":
        return mutual_knn(a, b, k)
    if metric == "unbiased_cka":
        return unbiased_cka(a, b)
    raise ValueError(f"unknown alignment metric {metric!r}; known: {METRICS}")


def layer_pair_alignment(hidden_a: list[torch.Tensor], hidden_b: list[torch.Tensor], metric: str, k: int) -> np.ndarray:
    """(len(hidden_a), len(hidden_b)) alignment of every pair of hidden layers."""
    return np.array([[alignment(ha, hb, metric, k) for hb in hidden_b] for ha in hidden_a])
