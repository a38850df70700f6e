"""Series IO, transforms, splits, windows, and the GluonTS stand-in round trip."""

import numpy as np
import pandas as pd
import pytest
import torch

from methods.timemcl.data import (
    load_gluonts_multivariate,
    load_series_csv,
    make_windows,
    split_series,
    transform,
    write_gluonts_standin,
)


def test_make_windows_count_and_content():
    series = np.arange(20, dtype=np.float32).reshape(10, 2)  # row t = [2t, 2t+1]
    ctx, tgt = make_windows(series, context_length=3, horizon=2, stride=2)
    assert ctx.dtype == torch.float32 and ctx.shape == (3, 3, 2) and tgt.shape == (3, 2, 2)  # starts 0, 2, 4
    for i, s in enumerate([0, 2, 4]):
        assert np.array_equal(ctx[i].numpy(), series[s : s + 3])
        assert np.array_equal(tgt[i].numpy(), series[s + 3 : s + 5])
    assert make_windows(series, 3, 2, 1)[0].shape[0] == 6  # (10 - 5) // 1 + 1
    assert make_windows(series, 8, 2)[0].shape[0] == 1  # exactly one window fits
    with pytest.raises(ValueError, match=r"10 steps.*3 \+ 8 = 11"):
        make_windows(series, 3, 8)


def test_split_series_keeps_context_and_no_shared_targets():
    series = np.arange(100, dtype=np.float32)[:, None]
    train, val, test = split_series(series, 0.1, 0.2, context_length=5)
    assert len(train) == 70 and len(val) == 10 + 5 and len(test) == 20 + 5
    assert val[0, 0] == 65 and test[0, 0] == 75  # the 5 rows before each split point
    # the first test window predicts exactly from the split point; the last train target is row 69
    assert make_windows(test, 5, 3)[1][0, 0, 0].item() == 80
    assert make_windows(train, 5, 3)[1][-1, -1, 0].item() == 69
    val_targets = make_windows(val, 5, 3)[1].numpy().ravel()
    assert val_targets.min() == 70 and val_targets.max() == 79
    with pytest.raises(ValueError, match="length 10"):
        split_series(series[:10], 0.3, 0.3, context_length=8)


def test_load_series_csv(tmp_path):
    path = tmp_path / "s.csv"
    pd.DataFrame({"date": ["a", "b", "c"], "x": [1.0, 2.0, 3.0], "y": [4, 5, 6]}).to_csv(path, index=False)
    assert load_series_csv(path).tolist() == [[1, 4], [2, 5], [3, 6]]  # numeric columns only
    out = load_series_csv(path, ["y"])
    assert out.dtype == np.float32 and out.shape == (3, 1)
    with pytest.raises(ValueError, match=r"s\.csv: column 'z' not found"):
        load_series_csv(path, ["x", "z"])
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"x": [1.0, None, 3.0]}).to_csv(bad, index=False)
    with pytest.raises(ValueError, match=r"bad\.csv: 1 row\(s\) with missing values, first at data row 1"):
        load_series_csv(bad)


def test_transforms():
    prices = np.array([[1.0, 2.0], [np.e, 4.0], [np.e**3, 8.0]])
    assert np.allclose(transform(prices, "log")[:, 0], [0, 1, 3])
    r = transform(prices, "log_diff")
    assert r.shape == (2, 2) and np.allclose(r[:, 0], [1, 2]) and np.allclose(r[:, 1], np.log(2))
    assert np.array_equal(transform(prices, "none"), prices.astype(np.float32))
    with pytest.raises(ValueError, match="strictly positive"):
        transform(-prices, "log")
    with pytest.raises(ValueError, match="kind='sqrt'.*none, log, log_diff"):
        transform(prices, "sqrt")


def test_gluonts_standin_round_trip(tmp_path):
    pytest.importorskip("gluonts", reason="gluonts is the full-scale loader; install the 'full' extra")
    rng = np.random.default_rng(0)
    series = rng.normal(size=(120, 4)).astype(np.float32)
    folder = write_gluonts_standin(tmp_path, "electricity_nips", series, "h", 24, rolling_evaluations=3)
    assert (folder / "metadata.json").exists() and (folder / "train").is_dir() and (folder / "test").is_dir()
    back = load_gluonts_multivariate("electricity_nips", tmp_path)
    assert back.dtype == np.float32 and np.array_equal(back, series)
    assert np.array_equal(load_gluonts_multivariate("electricity_nips", tmp_path, max_dims=2), series[:, :2])
    from gluonts.dataset.repository import get_dataset  # the real loader sees the split GluonTS expects

    ds = get_dataset("electricity_nips", path=tmp_path)
    assert ds.metadata.prediction_length == 24 and ds.metadata.freq == "h"
    assert [len(e["target"]) for e in ds.train] == [120 - 72] * 4
    assert sorted(len(e["target"]) for e in ds.test) == sorted([48 + 24, 48 + 48, 120] * 4)
    with pytest.raises(ValueError, match="not a GluonTS repository dataset name"):
        write_gluonts_standin(tmp_path, "my_data", series, "h", 24)
