"""`make diff`: verdicts that changed between two runs, from folders and from git revisions."""

import subprocess

import pytest

from methods.common import claims as C
from methods.common import diff as D
from methods.common.io import write_json

DECL = {
    "paper": "demo",
    "title": "Demo",
    "arxiv": "0",
    "claims": [
        {
            "id": "faster",
            "kind": "headline",
            "setting": "stand-in",
            "nulls": [{"name": "base", "kind": "ablation", "sub": {"t": "t_base"}}],
            "statement": "faster",
            "paper_value": {"value": 2, "source": "abstract"},
            "criterion": "t < t_base",
        },
        {"id": "finite", "kind": "check", "statement": "finite loss", "criterion": "loss < 1e9"},
    ],
}


def _run(folder, t, loss=1.0, nested=True):
    doc = C.evaluate_claims(DECL, {"t": t, "t_base": [2.0, 2.0], "loss": loss}, "tiny")
    write_json(folder / "demo" / "claims.json" if nested else folder / "demo.claims.json", doc)
    return folder


def test_a_planted_verdict_change_is_reported_with_both_values(tmp_path):
    a = _run(tmp_path / "a", [1.0, 1.05])
    b = _run(tmp_path / "b", [3.0, 2.5], nested=False)  # a published folder
    out = D.render("a", "b", D.load_run(str(a)), D.load_run(str(b)))
    assert "1 claim(s) changed verdict." in out
    row = [line for line in out.splitlines() if line.startswith("| `demo` |")]
    assert len(row) == 1 and "| faster | headline | reproduced | not_reproduced |" in row[0]
    assert "`t` = 1.025 ± 0.035 (n=2)" in row[0] and "`t` = 2.75 ± 0.35 (n=2)" in row[0]
    assert "commit " in out and "packages that differ: none" in out


def test_same_run_shows_no_change_and_all_lists_moved_values(tmp_path):
    a = _run(tmp_path / "a", [1.0, 1.05])
    b = _run(tmp_path / "b", [1.0, 1.1])
    assert "0 claim(s) changed verdict" in D.render("a", "b", D.load_run(str(a)), D.load_run(str(a)))
    out = D.render("a", "b", D.load_run(str(a)), D.load_run(str(b)), show_all=True)
    assert "0 claim(s) changed verdict; 1 more moved in value" in out


def test_a_git_revision_reads_its_published_run(tmp_path):
    repo = tmp_path / "repo"
    _run(repo / "docs" / "run", [1.0, 1.05], nested=False)
    git = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True)  # noqa: E731
    git("init", "-q")
    git("add", "-A")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "run")
    docs = D.load_run("HEAD", root=repo)
    assert list(docs) == ["demo"] and docs["demo"]["claims"][0]["verdict"] == "reproduced"
    with pytest.raises(SystemExit, match="neither a folder nor a git revision"):
        D.load_run("no-such-rev", root=repo)


def test_an_empty_folder_is_named(tmp_path):
    with pytest.raises(SystemExit, match="no <paper>/claims.json"):
        D.load_run(str(tmp_path))


def test_a_premise_only_change_is_flagged_as_a_definition_change(tmp_path):
    """cfdg's case between two published runs: the same measured values, a premise added, the verdict moved."""
    a = _run(tmp_path / "a", [1.0, 1.05])
    premised = {**DECL, "claims": [{**DECL["claims"][0], "testable_if": "loss < 0.5"}, DECL["claims"][1]]}
    doc = C.evaluate_claims(premised, {"t": [1.0, 1.05], "t_base": [2.0, 2.0], "loss": 1.0}, "tiny")
    write_json(tmp_path / "b" / "demo" / "claims.json", doc)
    out = D.render("a", "b", D.load_run(str(a)), D.load_run(str(tmp_path / "b")))
    row = [line for line in out.splitlines() if line.startswith("| `demo` | faster")][0]
    assert "| reproduced | inconclusive |" in row
    assert "definition changed: testable_if" in row and "verdict moved with identical measured values" in row
    moves = D.moves_markdown(D.load_run(str(a))["demo"], doc)
    assert "| faster | reproduced | inconclusive | definition changed: testable_if;" in moves


def test_a_version_1_row_reads_its_null_as_one_null():
    old = {"criterion": "a < b", "kind": "headline", "setting": "paper", "null": {"a": "b"}}
    new = {**old, "nulls": [{"name": "b", "kind": "ablation", "sub": {"a": "b"}}]}
    del new["null"]
    assert D.definition(old)["nulls"] == D.definition(new)["nulls"] == [{"a": "b"}]
    assert D.definition_changes(old, {**new, "setting": "toy"}) == ["setting"]


def test_an_empty_spec_is_named_not_read_as_the_current_folder():
    with pytest.raises(SystemExit, match="A or B is empty"):
        D.load_run("")


@pytest.mark.parametrize(
    "doc,field",
    [
        ({"paper": "demo"}, "`claims`"),
        ({"claims": [{"id": "x", "verdict": "reproduced"}]}, r"`claims\[0\].measured`"),
        ({"claims": [{"id": "x", "verdict": "passed", "measured": {"t": 1.0}}]}, r"`claims\[0\].measured.t`"),
        ({"claims": [], "provenance": {"commit": "c", "dirty": False, "scale": "tiny"}}, "`provenance.host`"),
    ],
)
def test_another_layout_names_the_file_and_the_missing_field(tmp_path, doc, field):
    write_json(tmp_path / "run" / "demo" / "claims.json", doc)
    with pytest.raises(SystemExit, match=rf"run/demo/claims.json: .*lacks {field}"):
        D.load_run(str(tmp_path / "run"))


def test_a_validity_condition_added_is_flagged_as_a_definition_change(tmp_path):
    a = _run(tmp_path / "a", [1.0, 1.05])
    gated = {**DECL, "claims": [{**DECL["claims"][0], "valid_if": "compiled_kernels > 0"}, DECL["claims"][1]]}
    measured = {"t": [1.0, 1.05], "t_base": [2.0, 2.0], "loss": 1.0, "compiled_kernels": 0.0}
    doc = C.evaluate_claims(gated, measured, "tiny")
    moves = D.moves_markdown(D.load_run(str(a))["demo"], doc)
    assert "| faster | reproduced | inconclusive | definition changed: valid_if;" in moves


def test_the_runs_header_names_the_machines_of_the_jobs(tmp_path):
    """A full-scale run's claims job sits on a CPU node; the header names the GPU nodes its jobs computed on."""
    doc = C.evaluate_claims(DECL, {"t": [1.0, 1.05], "t_base": [2.0, 2.0], "loss": 1.0}, "full")
    host = {**doc["provenance"]["host"], "cpu": "Node CPU", "gpu": "Fake GPU X1"}
    doc["provenance"]["jobs"] = [{"job": "demo/train", "rule": "demo_train", "host": host, "environment": {}}]
    (line,) = D._provenance_lines("A", "a", {"demo": doc})
    assert "jobs on Node CPU + Fake GPU X1" in line
