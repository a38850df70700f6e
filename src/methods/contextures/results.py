"""Step contextures_claims: per split seed, over the datasets of the current scale, the correlation statistics
of tau vs err_{d*} and of the baselines, the U-shape share, CCA by width; the verdicts of claims.yaml."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import write_json

from .data import is_paper_data
from .outputs import merge_datasets, merge_scaling

DECLARATION = Path(__file__).with_name("claims.yaml")
CORRELATION_STATS = ("pearson", "spearman", "pearson_loo_min", "spearman_loo_min")


def _over_datasets(docs: list[dict], n_seeds: int, context_set: str, metric: str) -> dict:
    """Per split seed, the median and mean over datasets of each correlation statistic of `metric` (tau or a
    baseline) over `context_set`, and the share of datasets where all of them are positive."""
    stats = np.array(
        [
            [[doc["runs"][i]["correlations"][context_set][metric][k] for k in CORRELATION_STATS] for doc in docs]
            for i in range(n_seeds)
        ]
    )  # (seeds, datasets, stats)
    out = {}
    for j, k in enumerate(CORRELATION_STATS):
        out[f"{k}_median"] = np.median(stats[:, :, j], 1).tolist()
        out[f"{k}_mean"] = stats[:, :, j].mean(1).tolist()
    out["positive_share"] = (stats.min(2) > 0).mean(1).tolist()
    return out


def claims_metrics(dataset_jsons: list[str], scaling_jsons: list[str]) -> dict:
    """Per split seed, over the datasets of the current scale: the correlation statistics of tau vs err_{d*}
    over the paper's A = X contexts (no prefix; `paper_data_` over the paper's own sets alone), of the two baselines in place of tau (`decay_`, `shuffled_`)
    and of tau over all contexts including the label contexts (`all_contexts_`); the U-shape share and its
    shuffled-order null; CCA by width, trained and untrained, and of the PCA encoder. The step outputs come one file per seed group
    (`outputs.merge_datasets`, `outputs.merge_scaling`)."""
    docs = merge_datasets(dataset_jsons)
    n_seeds = len(docs[0]["runs"])
    paper_docs = [doc for doc in docs if is_paper_data(doc["dataset"])]
    m = {}
    # every dataset of the scale (no prefix), and the paper's own sets alone (`paper_data_`)
    for group, group_docs in (("", docs), ("paper_data_", paper_docs)):
        if not group_docs:
            continue
        for prefix, context_set, metric in (
            ("", "paper_set", "tau"),
            ("decay_", "paper_set", "decay"),
            ("shuffled_", "paper_set", "shuffled"),
            ("all_contexts_", "all", "tau"),
        ):
            stats = _over_datasets(group_docs, n_seeds, context_set, metric)
            m.update({group + prefix + k: v for k, v in stats.items()})
        for key in ("knn_interior_minimum", "knn_interior_minimum_shuffled"):
            m[group + key.replace("knn_interior_minimum", "ushape_share")] = [
                float(np.mean([doc["runs"][i][key] for doc in group_docs])) for i in range(n_seeds)
            ]
    for doc in docs:
        for k in CORRELATION_STATS:
            m[f"{k}_{doc['dataset']}"] = [r["correlations"]["paper_set"]["tau"][k] for r in doc["runs"]]
    sc = merge_scaling(scaling_jsons)
    cca = np.array([sc["cca"][s] for s in sorted(sc["cca"], key=int)])  # (seeds, widths)
    cca0 = np.array([sc["cca_untrained"][s] for s in sorted(sc["cca_untrained"], key=int)])
    m["cca_smallest_width"], m["cca_largest_width"] = cca[:, 0].tolist(), cca[:, -1].tolist()
    m["cca_untrained_largest_width"], m["cca_untrained_smallest_width"] = cca0[:, -1].tolist(), cca0[:, 0].tolist()
    m["cca_untrained_last_doubling_gain"] = (cca0[:, -1] - cca0[:, -2]).tolist()
    if "cca_pca" in sc:  # the trivial linear encoder: the inputs' top-d principal components
        m["cca_pca"] = [float(sc["cca_pca"][s]) for s in sorted(sc["cca_pca"], key=int)]
    m["cca_last_doubling_gain"] = (cca[:, -1] - cca[:, -2]).tolist()
    m["cca_first_doubling_gain"] = (cca[:, 1] - cca[:, 0]).tolist()
    return m


def write_paper_claims(
    dataset_jsons: list[str], scaling_jsons: list[str], scale: str, claims_path: str, summary_path: str
) -> None:
    m = claims_metrics(dataset_jsons, scaling_jsons)
    write_json(summary_path, m)
    write_claims(claims_path, evaluate_claims(load_declaration(DECLARATION), m, scale))
