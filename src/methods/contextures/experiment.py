"""Step contextures_dataset: every context of one dataset on every split seed of the job's group: the
context-quality metric tau against the probe error err_{d*} (Section 5.3 protocol), their correlations and
the two baselines in place of tau."""

from __future__ import annotations

import numpy as np

from methods.common.io import log, write_json
from methods.common.stats import robust_correlation

from . import spectral as S
from .data import load_dataset, split


def levels_of(kind: str, levels: list[float], x: np.ndarray) -> list[float]:
    """KNN and label levels are neighbour counts; RBF levels scale 1 / median squared distance."""
    if kind.startswith("knn") or kind == "label":
        return [int(k) for k in levels if int(k) < len(x)]
    d2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    med = np.median(d2[np.triu_indices(len(x), 1)])
    return [float(c) / med for c in levels]


def probe_dims(d_grid: list[int], limit: int, rank: int | None = None) -> list[int]:
    """Probe dimensions of a context: the d grid below limit = min(d0, number of computed non-constant
    functions); for a finite-rank operator (rank given: a label context of C classes has C - 1 non-constant
    singular functions, the rest are 0) the grid up to min(rank, limit) and that number itself."""
    if rank is None:
        return [d for d in d_grid if d < limit]
    top = min(rank, limit)
    return sorted({d for d in d_grid if d <= top} | {top})


def evaluate_context(kind, level, x, y, parts, d_grid, ridge_alpha, beta, d0_max, masks=None, labels=None) -> dict:
    """tau and err_{d*} of one context (Section 5.3 protocol); masks: feature masks of the *_mask kinds;
    labels: class indices of every row (label_classes), of which the label context reads the pretraining
    rows' only."""
    xp = x[parts["pretrain"]]
    anchor_labels = None if labels is None else labels[parts["pretrain"]]
    spec = S.spectrum(S.context_matrix(kind, xp, xp, level, masks, anchor_labels))
    d0 = min(d0_max, len(xp) // 2)
    tau, d_star_pred = S.tau_metric(spec["s"], beta, d0)
    down = S.context_matrix(kind, x[parts["downstream"]], xp, level, masks, anchor_labels)
    test = S.context_matrix(kind, x[parts["test"]], xp, level, masks, anchor_labels)
    # a label context has C - 1 non-constant functions; the A = X contexts keep the d grid below d0
    rank = int((spec["s"][1:] > 1e-10).sum()) if kind == "label" else None
    errs = {
        d: S.ridge_probe_error(
            S.extend(down, spec, d), y[parts["downstream"]], S.extend(test, spec, d), y[parts["test"]], ridge_alpha
        )
        for d in probe_dims(d_grid, min(d0, len(spec["s"]) - 1), rank)
    }
    s2 = spec["s"][1:d0] ** 2
    decay = -np.polyfit(np.arange(1, len(s2) + 1), np.log(np.clip(s2, 1e-12, None)), 1)[0] if len(s2) > 1 else 0.0
    return {
        "kind": kind,
        "level": level,
        "tau": tau,
        "d_tau": d_star_pred,
        "err": min(errs.values()),
        "d_err": min(errs, key=errs.get),
        "decay": float(decay),
        "s_top": spec["s"][:8].tolist(),
    }


def correlations_of(rows: list[dict], seed: int) -> dict:
    """tau vs err_{d*} over a set of contexts (methods.common.stats.robust_correlation: Pearson, Spearman and
    their ranges with one context left out), and the same for the two baselines in place of tau: the spectral
    decay rate lambda, and tau shuffled across the contexts (a metric that carries no information)."""
    tau, err = np.array([r["tau"] for r in rows]), np.array([r["err"] for r in rows])
    decay = np.array([r["decay"] for r in rows])
    shuffled = np.random.default_rng(1000 + seed).permutation(tau)
    return {
        "tau": robust_correlation(tau, err),
        "decay": robust_correlation(decay, err),
        "shuffled": robust_correlation(shuffled, err),
    }


def knn_interior_minimum(rows: list[dict], seed: int) -> dict:
    """Is the smallest err_{d*} over the KNN contexts (in order of K) at an interior K? And the same for the
    errors in a shuffled order of K (the null: an unordered curve has its minimum inside with chance
    (n - 2) / n)."""
    knn_err = [r["err"] for r in rows if r["kind"] == "knn"]
    shuffled = np.random.default_rng(2000 + seed).permutation(knn_err)
    interior = lambda e: bool(len(e) > 2 and 0 < int(np.argmin(e)) < len(e) - 1)  # noqa: E731
    return {"knn_interior_minimum": interior(knn_err), "knn_interior_minimum_shuffled": interior(shuffled)}


def run_dataset(
    dataset: str,
    contexts: dict,
    seeds: list[int],
    fractions: dict,
    max_pretrain: int,
    d_grid: list[int],
    ridge_alpha: float,
    beta: float,
    d0_max: int,
    out_json: str,
    mask: dict | None = None,
    wheel: str | None = None,
    openml_npz: str | None = None,
    label_bins: int = 10,
) -> None:
    """Every context of one dataset on every split seed: tau and err_{d*}, and their correlations
    (`correlations_of`) over the paper's Section 5 contexts (A = X: KNN, RBF and their masked versions;
    "paper_set") and over all contexts including the label contexts (A = Y, our addition; "all").
    Label contexts (kind "label") read the pretraining targets, classes or `label_bins` quantile bins.
    Step contextures_dataset: `seeds` are the split seeds of the job's group (all at tiny scale, one at paper
    scale); the eigendecompositions use the job's BLAS threads (Snakemake sets OMP_NUM_THREADS and the like)."""
    x, y = load_dataset(dataset, wheel, openml_npz)
    mask = mask or {"ratio": 0.2, "n_masks": 50}
    runs = []
    for seed in seeds:
        parts = split(len(x), fractions, max_pretrain, seed)
        masks = S.feature_masks(x.shape[1], mask["ratio"], mask["n_masks"], seed)
        labels = S.label_classes(y, parts["pretrain"], label_bins)
        rows = []
        for kind, levels in contexts.items():
            for level in levels_of(kind, levels, x[parts["pretrain"]]):
                rows.append(
                    evaluate_context(
                        kind,
                        level,
                        x,
                        y,
                        parts,
                        d_grid,
                        ridge_alpha,
                        beta,
                        d0_max,
                        masks if kind.endswith("_mask") else None,
                        labels if kind == "label" else None,
                    )
                )
        paper_set = [r for r in rows if r["kind"] != "label"]
        corr = {"paper_set": correlations_of(paper_set, seed), "all": correlations_of(rows, seed)}
        runs.append({"seed": seed, "contexts": rows, "correlations": corr, **knn_interior_minimum(rows, seed)})
        c = corr["paper_set"]["tau"]
        log(
            f"{dataset} seed {seed}: tau vs err over the A = X contexts: Pearson {c['pearson']:.3f} "
            f"(leave-one-out min {c['pearson_loo_min']:.3f}), Spearman {c['spearman']:.3f} "
            f"(min {c['spearman_loo_min']:.3f}); all contexts: Pearson {corr['all']['tau']['pearson']:.3f}; "
            f"KNN minimum interior: {runs[-1]['knn_interior_minimum']}"
        )
    write_json(out_json, {"dataset": dataset, "n": len(x), "runs": runs})
