"""Shared helpers: median timing (warm-up calls untimed) and the npz array round trip."""

import numpy as np
import pytest

from methods.common.io import load_arrays, save_arrays
from methods.common.timing import median_time


def test_median_time_counts_warmup_and_repeats():
    calls = []
    t = median_time(lambda: calls.append(1), repeats=5, warmup=2)
    assert len(calls) == 7 and t >= 0.0
    with pytest.raises(ValueError, match="repeats"):
        median_time(lambda: None, repeats=0)


def test_arrays_round_trip_cast_and_bad_file(tmp_path):
    p = tmp_path / "a.npz"
    save_arrays(p, {"x": np.arange(3, dtype=np.int32), "y": [0.5, 1.5]})
    back = load_arrays(p)
    assert back["x"].dtype == np.int32 and back["x"].tolist() == [0, 1, 2] and back["y"].tolist() == [0.5, 1.5]
    save_arrays(p, {"x": np.arange(3, dtype=np.float32)}, dtype=np.float64)
    assert load_arrays(p)["x"].dtype == np.float64
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not an npz")
    with pytest.raises(ValueError, match="bad.npz.*rerun the rule"):
        load_arrays(bad)
