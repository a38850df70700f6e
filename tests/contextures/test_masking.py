"""Contextures: feature-masking contexts against an independent per-mask loop, and the baselines."""

import numpy as np
import pytest

from methods.contextures import spectral as S
from methods.contextures.results import claims_metrics


def test_feature_masks_hide_the_ratio_and_are_fixed_by_the_seed():
    m = S.feature_masks(10, 0.2, 50, seed=3)
    assert m.shape == (50, 10) and (m.sum(1) == 8).all()
    assert (m == S.feature_masks(10, 0.2, 50, seed=3)).all()
    assert not (m == S.feature_masks(10, 0.2, 50, seed=4)).all()
    assert (S.feature_masks(2, 0.9, 5).sum(1) == 1).all()  # at least one feature kept


def test_masked_knn_is_the_mean_of_knn_on_kept_features_reference():
    rng = np.random.default_rng(0)
    x, new = rng.normal(size=(30, 5)), rng.normal(size=(7, 5))
    masks = S.feature_masks(5, 0.4, 6, seed=1)
    ref = np.zeros((7, 30))
    for keep in masks:  # brute force per mask
        d2 = np.array([[np.sum((a[keep] - b[keep]) ** 2) for b in x] for a in new])
        for i, row in enumerate(d2):
            ref[i, np.argsort(row)[:4]] += 1.0 / 4 / len(masks)
    p = S.context_matrix("knn_mask", new, x, 4, masks)
    assert np.allclose(p, ref) and np.allclose(p.sum(1), 1.0)


def test_masked_rbf_is_row_stochastic_and_a_mask_keeping_everything_is_the_plain_context():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(25, 4))
    full = np.ones((3, 4), dtype=bool)
    assert np.allclose(S.context_matrix("rbf_mask", x, x, 0.5, full), S.rbf_context(x, x, 0.5))
    p = S.context_matrix("rbf_mask", x, x, 0.5, S.feature_masks(4, 0.25, 5))
    assert np.allclose(p.sum(1), 1.0)
    spec = S.spectrum(p)
    assert spec["s"][0] == pytest.approx(1.0) and (spec["s"][1:] <= 1 + 1e-9).all()
    with pytest.raises(ValueError, match="masks"):
        S.context_matrix("knn_mask", x, x, 3)


def _corr(p):
    return {
        "pearson": p,
        "spearman": p - 0.1,
        "pearson_loo_min": p - 0.2,
        "spearman_loo_min": p - 0.3,
        "pearson_loo_max": p,
        "spearman_loo_max": p,
    }


def test_baseline_statistics_in_claims_metrics(tmp_path):
    import json

    docs = []
    for name, pear in (("a", [0.9, 0.1]), ("b", [0.5, 0.3]), ("c", [0.2, -0.2])):
        runs = [
            {
                "correlations": {
                    "paper_set": {"tau": _corr(p), "decay": _corr(-p), "shuffled": _corr(p / 2)},
                    "all": {"tau": _corr(p + 0.1)},
                },
                "knn_interior_minimum": name != "c",
                "knn_interior_minimum_shuffled": True,
                "seed": i,
            }
            for i, p in enumerate(pear)
        ]
        f = tmp_path / f"{name}.json"
        f.write_text(json.dumps({"dataset": name, "runs": runs}))
        docs.append(str(f))
    sc = tmp_path / "s.json"
    sc.write_text(json.dumps({"cca": {"0": [0.1, 0.5, 0.6]}, "cca_untrained": {"0": [0.1, 0.2, 0.3]}}))
    m = claims_metrics(docs, [str(sc)])
    assert m["pearson_median"] == pytest.approx([0.5, 0.1])
    assert m["spearman_median"] == pytest.approx([0.4, 0.0])
    assert m["pearson_loo_min_mean"] == pytest.approx([1.6 / 3 - 0.2, 0.2 / 3 - 0.2])
    assert m["decay_pearson_median"] == pytest.approx([-0.5, -0.1])
    assert m["shuffled_pearson_mean"] == pytest.approx([1.6 / 6, 0.2 / 6])
    assert m["all_contexts_pearson_median"] == pytest.approx([0.6, 0.2])
    # all four statistics positive: seed 0 a, b (c's leave-one-out minima are <= 0); seed 1 none (0.1 - 0.3)
    assert m["positive_share"] == pytest.approx([2 / 3, 0.0])
    assert m["ushape_share"] == pytest.approx([2 / 3, 2 / 3]) and m["ushape_share_shuffled"] == [1.0, 1.0]
    assert m["spearman_loo_min_a"] == pytest.approx([0.6, -0.2])
    assert (m["cca_last_doubling_gain"], m["cca_first_doubling_gain"]) == (pytest.approx([0.1]), pytest.approx([0.4]))
    assert m["cca_untrained_largest_width"] == [0.3] and m["cca_untrained_smallest_width"] == [0.1]
    assert m["cca_untrained_last_doubling_gain"] == pytest.approx([0.1]) and "cca_pca" not in m
    assert not any(k.startswith("paper_data_") for k in m)  # none of a, b, c is one of the paper's sets
    # the same sets named as a stand-in (wine) and two of the paper's sets: `paper_data_` reads those two alone
    renamed = []
    for f, name in zip(docs, ("wine", "biopsy", "concrete")):
        g = tmp_path / f"{name}.json"
        g.write_text(json.dumps({**json.loads(open(f).read()), "dataset": name}))
        renamed.append(str(g))
    p = claims_metrics(renamed, [str(sc)])
    assert all(p[k] == v for k, v in m.items() if not k.endswith(("_a", "_b", "_c")))  # every set, as before
    assert p["paper_data_pearson_median"] == pytest.approx([0.35, 0.05])  # medians of (0.5, 0.2) and (0.3, -0.2)
    assert p["paper_data_decay_pearson_mean"] == pytest.approx([-0.35, -0.05])
    assert p["paper_data_ushape_share"] == [0.5, 0.5] and p["paper_data_positive_share"] == pytest.approx([0.5, 0.0])
    # paper scale: one file per (dataset, seed) and per scaling seed, merged in seed order, same metrics
    per_seed = []
    for f in docs:
        doc = json.loads(open(f).read())
        for run in reversed(doc["runs"]):
            g = tmp_path / f"{doc['dataset']}_seed{run['seed']}.json"
            g.write_text(json.dumps({"dataset": doc["dataset"], "runs": [run]}))
            per_seed.append(str(g))
    sc1 = tmp_path / "s1.json"
    sc1.write_text(json.dumps({"cca": {"1": [0.2, 0.3, 0.9]}, "cca_untrained": {"1": [0.0, 0.1, 0.1]}}))
    merged = claims_metrics(per_seed, [str(sc1), str(sc)])
    assert {k: v for k, v in merged.items() if not k.startswith("cca")} == {
        k: v for k, v in m.items() if not k.startswith("cca")
    }
    assert merged["cca_largest_width"] == [0.6, 0.9] and merged["cca_smallest_width"] == [0.1, 0.2]
    sc1.write_text(
        json.dumps({"cca": {"1": [0.2, 0.3, 0.9]}, "cca_untrained": {"1": [0.0, 0.1, 0.1]}, "cca_pca": {"1": 0.4}})
    )
    sc.write_text(
        json.dumps({"cca": {"0": [0.1, 0.5, 0.6]}, "cca_untrained": {"0": [0.1, 0.2, 0.3]}, "cca_pca": {"0": 0.3}})
    )
    assert claims_metrics(per_seed, [str(sc1), str(sc)])["cca_pca"] == [0.3, 0.4]


def test_correlations_of_a_dataset_use_the_robust_helper():
    """One context that carries a Pearson correlation alone: Spearman and the leave-one-out minimum say so."""
    from methods.contextures.experiment import correlations_of

    tau = [2.0, 2.1, 2.2, 2.3, 2.4, 6.0]
    err = [0.5, 0.4, 0.45, 0.35, 0.42, 0.9]  # only the last context is far out
    rows = [{"tau": t, "err": e, "decay": 0.0 + i} for i, (t, e) in enumerate(zip(tau, err))]
    c = correlations_of(rows, seed=0)["tau"]
    assert c["pearson"] > 0.8 and c["pearson_loo_min"] < 0.0 and c["spearman"] < 0.5
