"""`make readme-table` (report.publish_run) compares the run with the commit it names: a run made with a config
overlay, or whose rows differ from the committed claims.yaml (criterion, nulls, setting, kind, a claim dropped,
values edited so the recorded verdict no longer follows), is refused and nothing is written."""

import copy
import subprocess

import pytest
import yaml

from methods.common import claims as C
from methods.common import report as R
from methods.common.io import write_json
from methods.common.provenance import config_digest

GIT = ["git", "-c", "user.email=test@example.org", "-c", "user.name=test"]
CONFIG = {"scale": "tiny", "outdir": "results", "demo": {"kappa": 1.0, "q_llm": 0.8}}
TRIVIAL = [{"name": "const", "kind": "trivial", "sub": {"a": "const"}}]
DECL = {
    "paper": "demo",
    "title": "Demo paper",
    "arxiv": "0000.00000",
    "claims": [
        {
            "id": "a_beats_base",
            "kind": "headline",
            "setting": "toy",
            "statement": "a is below the baseline",
            "paper_value": {"value": 1, "source": "Table 1"},
            "criterion": "a < base",
            "nulls": TRIVIAL,
            "evidence": ["metrics.json"],
        },
        {
            "id": "beats_{ds}",
            "for_each": "ds",
            "kind": "headline",
            "setting": "toy",
            "statement": "on {ds}",
            "paper_value": {"value": 2, "source": "Table 2"},
            "criterion": "a_{ds} < base",
            "nulls": [{"name": "const", "kind": "trivial", "sub": {"a_{ds}": "const"}}],
        },
        {"id": "positive", "kind": "check", "statement": "a is positive", "criterion": "a > 0"},
    ],
}
MEASURED = {
    "a": [0.5, 0.6, 0.55],
    "base": [1.0, 1.0, 1.0],
    "const": [1.2, 1.1, 1.3],
    "a_x": [0.4, 0.5, 0.45],
    "a_y": [0.9, 0.7, 0.8],
}


def git(root, *args):
    return subprocess.run([*GIT, *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    """A committed checkout with one paper (config section, claims.yaml, READMEs) and a clean run of it."""
    root = tmp_path / "repo"
    (root / "workflow" / "rules").mkdir(parents=True)
    (root / "workflow" / "rules" / "demo.smk").write_text("")
    (root / "config.yaml").write_text(yaml.safe_dump(CONFIG))
    paper = root / "src" / "methods" / "demo"
    paper.mkdir(parents=True)
    (paper / "claims.yaml").write_text(yaml.safe_dump(DECL, sort_keys=False))
    begin, end = R.markers("claims-table")
    (paper / "README.md").write_text(f"# demo\n{begin}\n{end}\n")
    begin, end = R.markers("papers-table")
    (root / "README.md").write_text(f"intro\n{begin}\nold\n{end}\n")
    (root / ".gitignore").write_text("results/\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "demo")
    return root


def run_doc(root, config=CONFIG):
    doc = C.evaluate_claims(DECL, MEASURED, "tiny", expand_over={"ds": ["x", "y"]})
    doc["provenance"].update(
        commit=git(root, "rev-parse", "HEAD"),
        dirty=False,
        config_digest=config_digest({"scale": config["scale"], "demo": config["demo"]}),
    )
    return doc


def publish(root, doc):
    write_json(root / "results" / "demo" / "claims.json", doc)
    return R.publish_run(root / "results", root)


def refused(root, doc, match):
    with pytest.raises(SystemExit, match=match):
        publish(root, doc)
    assert not (root / "docs").exists() and "old" in (root / "README.md").read_text()


def row(doc, cid):
    return next(c for c in doc["claims"] if c["id"] == cid)


def test_a_run_of_the_committed_config_and_claims_publishes(repo):
    written = publish(repo, run_doc(repo))
    assert str(repo / "docs" / "run" / "demo.claims.json") in written


def test_a_run_made_with_a_config_overlay_is_refused(repo):
    """`--configfile` with other values at the same scale, from a clean commit: the recorded digest says so."""
    overlay = copy.deepcopy(CONFIG)
    overlay["demo"].update(kappa=0.0, q_llm=0.99)
    refused(repo, run_doc(repo, overlay), r"demo: config digest .* the run was made with another config")


def test_a_row_with_a_flipped_criterion_is_refused(repo):
    doc = run_doc(repo)
    r = row(doc, "a_beats_base")
    r["criterion"] = "a > base"
    r["verdict"] = "reproduced"
    refused(repo, doc, r"demo/a_beats_base: criterion is 'a > base' in the run, 'a < base' in claims.yaml")


def test_a_row_with_inverted_values_is_refused(repo):
    """The values of a seed swapped with the verdict left as it was: the committed declaration computes another."""
    doc = run_doc(repo)
    r = row(doc, "beats_y")
    r["measured"]["a_y"]["values"] = [1.5, 1.7, 1.6]
    refused(repo, doc, r"demo/beats_y: reads .* computes")


def test_a_dropped_claim_is_refused(repo):
    doc = run_doc(repo)
    doc["claims"] = [c for c in doc["claims"] if c["id"] != "a_beats_base"]
    refused(repo, doc, r"declares \['a_beats_base'\], which the run lacks")


def test_a_row_with_another_null_or_setting_is_refused(repo):
    doc = run_doc(repo)
    row(doc, "a_beats_base")["nulls"][0]["sub"] = {"a": "a"}
    row(doc, "beats_x")["setting"] = "paper"
    refused(repo, doc, r"a_beats_base: its nulls differ(.|\n)*beats_x: setting is 'paper' in the run, 'toy'")


def test_inf_and_zero_in_criteria_give_the_same_verdict_computed_and_republished(repo):
    """A measured inf is stored as null; a criterion dividing by a measured 0 is undefined on that seed. Either
    way the verdict computed at run time must be the one the publishing check recomputes from the stored row
    (here inconclusive), and nothing raises."""
    measured = {**MEASURED, "a": [float("inf"), 0.6, 0.55], "base": [1.0, 0.0, 1.0]}
    decl = copy.deepcopy(DECL)
    decl["claims"][0]["criterion"] = "a / base < 1"
    (repo / "src" / "methods" / "demo" / "claims.yaml").write_text(yaml.safe_dump(decl, sort_keys=False))
    git(repo, "commit", "-qam", "ratio criterion")
    doc = C.evaluate_claims(decl, measured, "tiny", expand_over={"ds": ["x", "y"]})
    doc["provenance"].update(
        commit=git(repo, "rev-parse", "HEAD"),
        dirty=False,
        config_digest=config_digest({"scale": "tiny", "demo": CONFIG["demo"]}),
    )
    assert row(doc, "a_beats_base")["verdict"] == "inconclusive"
    publish(repo, doc)
    assert row(R.published_docs(repo / "docs" / "run")["demo"], "a_beats_base")["measured"]["a"]["values"][0] is None
