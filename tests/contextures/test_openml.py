"""Contextures' full-scale OpenML path, offline: the fetch step (submit host) with fetch_openml replaced by a
locally-built stand-in set, then the loader the compute jobs use on the file it wrote."""

import numpy as np
import pandas as pd
import pytest
import sklearn.datasets
from sklearn.utils import Bunch

from methods.contextures.data import fetch_openml_set, load_dataset


def _stand_in(target_kind):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "a": rng.normal(size=40),
            "b": rng.integers(0, 5, 40).astype(float),
            "colour": pd.Categorical(rng.choice(["red", "green", "blue"], 40)),
        }
    )
    frame.loc[5, "a"] = np.nan
    frame["y"] = (
        pd.Categorical(rng.choice(["benign", "malignant"], 40)) if target_kind == "class" else rng.normal(10, 3, 40)
    )
    return frame


@pytest.mark.parametrize("target_kind", ["class", "numeric"])
def test_openml_loader_through_fetch_openml(monkeypatch, tmp_path, target_kind):
    calls = {}
    frame = _stand_in(target_kind)

    def fake_fetch_openml(**kw):
        calls.update(kw)
        return Bunch(frame=frame.copy(), target_names=["y"])

    monkeypatch.setattr(sklearn.datasets, "fetch_openml", fake_fetch_openml)
    npz = str(tmp_path / "openml_breast-w.npz")
    fetch_openml_set("openml_breast-w", str(tmp_path), npz)
    x, y = load_dataset("openml_breast-w", openml_npz=npz)
    assert calls["name"] == "breast-w" and calls["data_home"] == str(tmp_path) and calls["as_frame"]
    kept = frame.dropna()
    assert x.shape == (39, 2 + 2)  # a, b and two dummies of colour
    assert np.allclose(x.mean(0), 0) and np.allclose(x.std(0), 1)
    if target_kind == "class":
        malignant = (kept["y"] == "malignant").to_numpy()
        assert y.shape == (39, 2) and np.allclose(y[:, 1], malignant - malignant.mean())
    else:
        t = kept["y"].to_numpy()
        assert y.shape == (39, 1) and np.allclose(y[:, 0], (t - t.mean()) / t.std())


def test_openml_by_dataset_id_passes_data_id_alone(monkeypatch, tmp_path):
    calls = {}

    def fake_fetch_openml(**kw):
        calls.update(kw)
        return Bunch(frame=_stand_in("numeric"), target_names=["y"])

    monkeypatch.setattr(sklearn.datasets, "fetch_openml", fake_fetch_openml)
    fetch_openml_set("openml_44956", str(tmp_path), str(tmp_path / "x.npz"))
    assert calls["data_id"] == 44956 and "name" not in calls and "version" not in calls


def test_an_openml_set_without_its_fetched_file_names_the_rule():
    with pytest.raises(ValueError, match="contextures_openml"):
        load_dataset("openml_44956")


def test_full_scale_lists_the_28_sets_of_the_paper_table_each_with_its_source():
    from pathlib import Path

    import yaml

    from methods.contextures.openml_sets import N_PAPER_SETS, PAPER_OPENML

    full = yaml.safe_load((Path(__file__).parents[2] / "config" / "full.yaml").read_text())["contextures"]
    ids = [int(d.removeprefix("openml_")) for d in full["datasets"]]
    assert len(ids) == len(set(ids)) == N_PAPER_SETS == 28 and set(ids) == set(PAPER_OPENML)
    assert {v[1] for v in PAPER_OPENML.values()} == {"paper", "unverified"}
    named = {v[0] for v in PAPER_OPENML.values() if v[1] == "paper"}
    assert named == {"breast-w", "abalone", "brazilian_houses", "fifa", "cps88wages"}  # the paper's text
    assert full["scaling"]["dataset"] == "openml_44956" and PAPER_OPENML[44956][0] == "abalone"
