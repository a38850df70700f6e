"""Step contextures_scaling: does a neural encoder trained on the spectral objective learn the contexture,
and better as it gets wider (Section 4.2)? Mean CCA to the exact top-d singular functions, vs width."""

from __future__ import annotations

import numpy as np

from methods.common.io import log, write_json

from . import spectral as S
from .data import load_dataset, split
from .encoder import train_encoder


def pca_features(x: np.ndarray, d: int) -> np.ndarray:
    """The trivial encoder: the inputs' top-d principal component scores (centred; as many as the rank allows)."""
    xc = x - x.mean(axis=0)
    u, s, _ = np.linalg.svd(xc, full_matrices=False)
    return u[:, :d] * s[:d]


def run_scaling(
    dataset: str,
    k: int,
    d: int,
    widths: list[int],
    depth: int,
    steps: int,
    lr: float,
    seeds: list[int],
    fractions: dict,
    max_pretrain: int,
    threads: int,
    out_json: str,
    openml_npz: str | None = None,
    device="cpu",
    wheel: str | None = None,
) -> None:
    """Step contextures_scaling: CCA between MLP encoders trained on the spectral objective (on `device`, the
    job's: a GPU at paper scale) and the exact top-d functions, vs width, for each seed of the job's group;
    the same encoders untrained (steps = 0: the null of 'learns the contexture'), and, per seed, the linear
    encoder a reviewer tries first: the top-d principal components of the inputs (no context, no training)."""
    import torch

    torch.set_num_threads(threads)
    x, _ = load_dataset(dataset, wheel, openml_npz)
    out = {"dataset": dataset, "k": k, "d": d, "widths": list(widths), "cca": {}, "cca_untrained": {}, "cca_pca": {}}
    for seed in seeds:
        xp = x[split(len(x), fractions, max_pretrain, seed)["pretrain"]]
        p_plus = S.knn_context(xp, xp, k)
        exact = S.spectrum(p_plus)["mu"][:, 1 : d + 1]
        out["cca"][str(seed)], out["cca_untrained"][str(seed)] = [], []
        out["cca_pca"][str(seed)] = S.mean_cca(pca_features(xp, d), exact)
        for w in widths:
            phi = train_encoder(xp, p_plus, d, w, depth, steps, lr, seed, device)
            out["cca"][str(seed)].append(S.mean_cca(phi, exact))
            phi0 = train_encoder(xp, p_plus, d, w, depth, 0, lr, seed, device)
            out["cca_untrained"][str(seed)].append(S.mean_cca(phi0, exact))
        log(
            f"seed {seed}: CCA vs width {dict(zip(widths, np.round(out['cca'][str(seed)], 3)))}; untrained "
            f"{dict(zip(widths, np.round(out['cca_untrained'][str(seed)], 3)))}; PCA {out['cca_pca'][str(seed)]:.3f}"
        )
    write_json(out_json, out)
