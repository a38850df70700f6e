"""REPORT.md, the papers table and the README splice."""

import pytest
from PIL import Image

from methods.common import claims as C
from methods.common import report as R
from methods.common.io import write_json
from methods.common.provenance import environment_digest

DECL = {
    "paper": "demo",
    "title": "Demo paper",
    "arxiv": "0000.00000",
    "claims": [
        {
            "id": "c1",
            "kind": "headline",
            "setting": "paper",
            "nulls": [{"name": "base", "kind": "trivial", "sub": {"a": "base"}}],
            "statement": "s1",
            "paper_value": {"value": 1, "source": "Table 1"},
            "criterion": "a < 1",
            "evidence": ["figures/curve.png", "metrics.json"],
        },
        {
            "id": "c2",
            "kind": "headline",
            "setting": "stand-in",
            "nulls": [{"name": "base", "kind": "trivial", "sub": {"a": "base"}}],
            "statement": "s2",
            "paper_value": {"value": 2, "source": "Table 2"},
            "criterion": "a > 1",
            "evidence": ["figures/curve.png"],
            "note": "too small a model",
        },
        {"id": "c3", "kind": "check", "statement": "s3", "criterion": "a > 0"},
    ],
}


@pytest.fixture
def results(tmp_path):
    doc = C.evaluate_claims(DECL, {"a": [0.5, 0.51], "base": [1.0, 1.0]}, "tiny")
    write_json(tmp_path / "demo" / "claims.json", doc)
    bench = tmp_path / "benchmarks" / "demo"
    bench.mkdir(parents=True)
    header = "s\th:m:s\tmax_rss\n"
    (bench / "train.tsv").write_text(header + "12.5\t0:00:12\t1500\n")
    (bench / "eval.tsv").write_text(header + "7.5\t0:00:07\t100\n")
    return tmp_path


def test_runtime_is_the_sum_of_benchmark_seconds(results):
    assert R.paper_runtime_seconds(results / "benchmarks", "demo") == pytest.approx(20.0)
    assert R.paper_runtime_seconds(results / "benchmarks", "other") is None


def test_report_lists_claims_verdicts_figures_and_runtime(results):
    R.write_reports(
        [str(results / "demo" / "claims.json")],
        str(results / "REPORT.md"),
        str(results / "papers_table.md"),
        str(results / "benchmarks"),
    )
    text = (results / "REPORT.md").read_text()
    assert "| **c1**: s1 | paper |" in text and "| **c2**: s2 | stand-in |" in text
    assert text.count("**reproduced** (paper)") == 1 and text.count("**not_reproduced** (stand-in)") == 1
    assert "| **c3**: s3 |" in text and "**passed**" in text
    assert text.index("**c2**") < text.index("Checks (the project") < text.index("**c3**")
    assert "![curve](demo/figures/curve.png)" in text and text.count("![curve]") == 1
    assert "too small a model" in text
    assert "- commit: " in text and "- host: " in text and "numpy " in text
    table = (results / "papers_table.md").read_text()
    # headline claims only are counted; the check is listed apart; peak RSS is the largest job's
    assert "| `demo`: Demo paper" in table and "| 1 paper, 1 stand-in | 1/2 | 1 | 0 | 1 / 0 / 0 | 20 | 1.50 |" in table
    assert "| **total** | | **1/2** | **1** | **0** | **1 / 0 / 0** | | |" in table


def test_table_totals_are_the_sums_over_the_papers(results):
    doc = C.evaluate_claims(DECL, {"a": [0.5, 0.51], "base": [1.0, 1.0]}, "tiny")
    other = C.evaluate_claims({**DECL, "paper": "other"}, {"a": [2.0, 0.5], "base": [1.0, 1.0]}, "tiny")
    table = R.papers_table([doc, other], {})
    assert "| **total** | | **1/4** | **1** | **2** | **2 / 0 / 0** | | |" in table


def test_splice_readme_replaces_only_the_generated_block():
    begin, end = R.markers("papers-table")
    other_begin, other_end = R.markers("bench")
    readme = f"intro\n{begin}\nold table\n{end}\nmid\n{other_begin}\nkeep\n{other_end}\n"
    out = R.splice_readme(readme, "papers-table", "| new |\n")
    assert out == f"intro\n{begin}\n| new |\n{end}\nmid\n{other_begin}\nkeep\n{other_end}\n"
    with pytest.raises(ValueError, match="no generated block 'papers-table'"):
        R.splice_readme("no markers here", "papers-table", "| new |")


def test_readme_has_the_generated_blocks(repo_root):
    text = (repo_root / "README.md").read_text()
    begin, end = R.markers("papers-table")
    assert text.count(begin) == 1 and text.count(end) == 1


def test_paper_reference_links_only_arxiv_ids():
    from methods.common.report import paper_reference

    assert paper_reference("2502.09720") == "[arXiv 2502.09720](https://arxiv.org/abs/2502.09720)"
    assert paper_reference("ICML 2025 (PMLR 267:6291-6318)") == "ICML 2025 (PMLR 267:6291-6318)"


@pytest.fixture(autouse=True)
def no_commit_checks(monkeypatch):
    """These trees are no git repositories: the checks against the run's commit are tested in test_publish_checks."""
    monkeypatch.setattr(R, "run_problems", lambda docs, root: [])


def _tree(tmp_path, commits):
    """A repository-shaped tree with one finished tiny run of papers demo and other."""
    root = tmp_path / "repo"
    begin, end = R.markers("papers-table")
    (root / "workflow" / "rules").mkdir(parents=True)
    (root / "README.md").write_text(f"intro\n{begin}\nold\n{end}\nafter\n")
    cb, ce = R.markers("claims-table")
    for slug, commit in zip(("demo", "other"), commits):
        (root / "workflow" / "rules" / f"{slug}.smk").write_text("")
        (root / "src" / "methods" / slug).mkdir(parents=True)
        (root / "src" / "methods" / slug / "README.md").write_text(f"# {slug}\n## Results\n{cb}\n{ce}\nprose\n")
        doc = C.evaluate_claims({**DECL, "paper": slug}, {"a": [0.5, 0.51], "base": [1.0, 1.0]}, "tiny")
        doc["provenance"].update(commit=commit, dirty=False)
        write_json(root / "results" / slug / "claims.json", doc)
        (root / "results" / slug / "figures").mkdir()
        Image.new("RGB", (64, 48), "white").save(root / "results" / slug / "figures" / "curve.png")
        bench = root / "results" / "benchmarks" / slug
        bench.mkdir(parents=True)
        (bench / "run.tsv").write_text("s\th:m:s\tmax_rss\n30\t0:00:30\t2500\n")
    return root


def test_publish_copies_one_run_and_fills_every_readme(tmp_path):
    root = _tree(tmp_path, ["c0ffee", "c0ffee"])
    R.publish_run(root / "results", root)
    run = root / "docs" / "run"
    assert sorted(p.name for p in run.iterdir()) == [
        "demo.claims.json",
        "environment.txt",
        "figures",
        "figures.json",
        "other.claims.json",
        "papers_table.md",
        "usage.json",
    ]
    assert (run / "figures" / "demo" / "figures__curve.png").exists() and (root / "docs" / "index.html").exists()
    listed = (run / "environment.txt").read_text().splitlines()
    assert environment_digest(listed) == R.published_docs(run)["demo"]["provenance"]["environment_digest"]
    table = (run / "papers_table.md").read_text().strip()
    assert table == R.published_table(run)
    readme = (root / "README.md").read_text()
    assert table in readme and "old" not in readme and readme.startswith("intro\n") and readme.endswith("after\n")
    assert "| 30 | 2.50 |" in table
    paper = (root / "src" / "methods" / "demo" / "README.md").read_text()
    assert C.claims_table_markdown(R.published_docs(run)["demo"]) in paper and paper.endswith("prose\n")
    assert "No earlier published run of this paper." in paper
    # a second run with the method's number moved: each paper README lists the moved verdict and why
    for slug in ("demo", "other"):
        doc = C.evaluate_claims({**DECL, "paper": slug}, {"a": [1.5, 1.6], "base": [1.0, 1.0]}, "tiny")
        doc["provenance"].update(commit="d00d00", dirty=False)
        write_json(root / "results" / slug / "claims.json", doc)
    R.publish_run(root / "results", root)
    paper = (root / "src" / "methods" / "demo" / "README.md").read_text()
    assert "since the previous published run (commit `c0ffee`)" in paper
    assert "| c1 | reproduced | not_reproduced | the criterion fails on every seed (2) |" in paper
    assert paper.count(R.markers("verdict-moves")[0]) == 1 and paper.endswith("prose\n")


def test_publish_refuses_a_run_mixed_from_two_commits(tmp_path):
    root = _tree(tmp_path, ["c0ffee", "beef00"])
    with pytest.raises(SystemExit, match="one clean commit"):
        R.publish_run(root / "results", root)
    assert not (root / "docs").exists()
    assert "old" in (root / "README.md").read_text()


def test_publish_refuses_a_run_made_in_another_environment(tmp_path):
    root = _tree(tmp_path, ["c0ffee", "c0ffee"])
    doc = R.read_json(root / "results" / "demo" / "claims.json")
    doc["provenance"]["environment_digest"] = "0" * 16
    write_json(root / "results" / "demo" / "claims.json", doc)
    with pytest.raises(SystemExit, match="environment"):
        R.publish_run(root / "results", root)
    assert not (root / "docs").exists()
