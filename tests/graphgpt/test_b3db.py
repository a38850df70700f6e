"""B3DB's blood-brain-barrier permeability, a binary molecule classification read from the pinned qc-b3db wheel,
and the ROC-AUC it is scored with.

The tests on the real wheel fetch it through the download cache (`pip download` from the configured index the
first time, about 78 MB) and are skipped, with the reason, only where neither the cache nor an index can provide
it. The reader's errors are also tested on a small wheel of the same layout written here. The wheel holds plain
tab-separated text read by pandas' CSV parser: no member is unpickled, so a planted pickle cannot run
(tests/workflow/test_pins.py plants one for every pinned download, this one included).
"""

import pickle
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from methods.common.data import DownloadError, fetch_pypi_file, verify_pins
from methods.common.io import read_json
from methods.graphgpt import graphs as G
from methods.graphgpt.data import prepare_b3db
from methods.graphgpt.train import metric, roc_auc

ROOT = Path(__file__).resolve().parents[2]
PIN = yaml.safe_load((ROOT / "config.yaml").read_text())["graphgpt"]["b3db"]
B3DB_ROWS, B3DB_POSITIVE = 7_807, 4_956  # B3DB's classification set (Meng et al. 2021): BBB+ 4,956, BBB- 2,851


@pytest.fixture(scope="module")
def b3db_wheel(tmp_path_factory):
    dest = tmp_path_factory.mktemp("b3db") / PIN["filename"]
    try:
        return fetch_pypi_file("qc-b3db", PIN["version"], PIN["filename"], PIN["sha256"], dest)
    except DownloadError as e:
        pytest.skip(f"qc-b3db=={PIN['version']} is neither cached nor downloadable here: {e}")


@pytest.fixture(scope="module")
def b3db(b3db_wheel):
    return G.read_b3db(b3db_wheel)


# --- ROC-AUC --------------------------------------------------------------------------------------------


def test_roc_auc_is_the_share_of_correctly_ordered_pairs_with_ties_half():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    score = np.round(rng.normal(size=200) + y, 1)  # rounded: many ties
    pos, neg = score[y == 1], score[y == 0]
    pairs = (pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean()
    assert roc_auc(score, y) == pytest.approx(pairs, abs=1e-12)
    assert roc_auc(y.astype(float), y) == 1.0 and roc_auc(-y.astype(float), y) == 0.0
    assert metric(np.zeros(200), y, "binary") == 0.5  # a constant score: every pair a tie
    with pytest.raises(ValueError, match="both classes"):
        roc_auc(np.arange(3.0), np.ones(3))


# --- the real wheel ------------------------------------------------------------------------------------


def test_the_pinned_wheel_passes_its_pin(b3db_wheel):
    verify_pins({str(b3db_wheel): PIN["sha256"]})


def test_b3db_rows_columns_and_labels_are_as_documented(b3db):
    assert len(b3db) == B3DB_ROWS
    assert list(b3db.columns) == ["index", "smiles", "label_text", "bbb"]
    assert b3db["index"].is_unique and int(b3db["bbb"].sum()) == B3DB_POSITIVE
    assert (b3db["bbb"] == (b3db["label_text"] == "BBB+")).all()
    first = b3db.iloc[0]  # sulphasalazine, BBB-
    assert first["index"] == 1 and first["bbb"] == 0 and first["smiles"].startswith("O=C(O)c1cc(N=Nc2ccc")


def test_domain_draws_small_molecules_seeded_with_their_labels(b3db_wheel, b3db, tmp_path):
    out = tmp_path / "b.json"
    prepare_b3db(str(b3db_wheel), str(out), 0, 200, 0.2, 30)
    doc = read_json(out)
    task = doc["tasks"]["b3db"]
    assert task["kind"] == "binary" and task["n_out"] == 2 and len(task["graphs"]) == len(task["y"]) == 200
    assert len(set(task["test"])) == 40
    by_index = b3db.set_index("index")
    assert task["y"] == [float(by_index.at[i, "bbb"]) for i in task["b3db_index"]]
    assert all(1 <= len(rec["x"]) <= 30 for rec in task["graphs"])
    assert doc["pretrain"] == [["b3db", i] for i in range(200)]
    again = tmp_path / "again.json"
    prepare_b3db(str(b3db_wheel), str(again), 0, 200, 0.2, 30)
    assert read_json(again) == doc  # seeded
    with pytest.raises(ValueError, match="max_atoms=3 heavy atoms, fewer than n=200"):
        prepare_b3db(str(b3db_wheel), str(tmp_path / "x.json"), 0, 200, 0.2, 3)
    assert not (tmp_path / "x.json").exists()


# --- a small wheel of the same layout ----------------------------------------------------------------


def _wheel(tmp_path, frame: pd.DataFrame | None = None, raw: bytes | None = None) -> Path:
    path = tmp_path / "qc_b3db-0-py3-none-any.whl"
    if frame is None and raw is None:
        frame = pd.DataFrame(
            {"NO.": [1, 2, 3], "compound_name": ["a", "b", "c"], "SMILES": ["CCO", "c1ccccc1", "CN"],
             "BBB+/BBB-": ["BBB+", "BBB-", "BBB+"], "group": ["A", "B", "C"]}
        )  # fmt: skip
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(G.B3DB_MEMBER, raw if raw is not None else frame.to_csv(sep="\t", index=False))
        zf.writestr("B3DB/__init__.py", "raise ImportError('never imported')\n")
    return path


def test_reader_maps_labels_and_names_what_is_missing(tmp_path):
    df = G.read_b3db(_wheel(tmp_path))
    assert df["index"].tolist() == [1, 2, 3] and df["bbb"].tolist() == [1, 0, 1]
    bad = pd.DataFrame({"NO.": [1], "SMILES": ["C"], "BBB+/BBB-": ["BBB?"]})
    with pytest.raises(ValueError, match=r"labels \['BBB\?'\]"):
        G.read_b3db(_wheel(tmp_path, bad))
    with pytest.raises(ValueError, match=r"has no column\(s\) \['BBB\+/BBB-'\]"):
        G.read_b3db(_wheel(tmp_path, bad.drop(columns="BBB+/BBB-")))
    empty = tmp_path / "qc_b3db-1-py3-none-any.whl"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("B3DB/__init__.py", "")
    with pytest.raises(DownloadError, match="has no member 'B3DB/B3DB_classification.tsv'"):
        G.read_b3db(empty)


def test_reader_never_unpickles_a_member(tmp_path):
    class Boom:
        def __reduce__(self):
            return (Path(tmp_path / "ran").write_text, ("pickle ran",))

    with pytest.raises(ValueError, match=r"is not tab-separated text|has no column"):
        G.read_b3db(_wheel(tmp_path, raw=pickle.dumps(Boom())))
    assert not (tmp_path / "ran").exists()
