"""The published tiny run (docs/run/, written by `make readme-table`) against the READMEs and the claims contract.

Every number the READMEs' tables quote must come from this one run of one commit, every verdict in it must be
what its criterion computes from its recorded values under the committed declaration, and no headline claim may
read reproduced while a null or a member of its family holds in the method's place.
"""

import pytest

from methods.common import claims as C
from methods.common import report as R


@pytest.fixture(scope="module")
def run(repo_root):
    return repo_root / R.PUBLISHED_RUN


@pytest.fixture(scope="module")
def docs(run):
    return R.published_docs(run)


def headline_rows(docs):
    return [(slug, row) for slug, doc in docs.items() for row in doc["claims"] if row["kind"] == "headline"]


def test_every_paper_is_published_from_one_clean_commit(docs, repo_root):
    papers = sorted(
        p.stem for p in (repo_root / "workflow" / "rules").glob("*.smk") if p.stem not in {"common", "report"}
    )
    assert sorted(docs) == papers
    for doc in docs.values():
        C.validate_claims(doc)
        assert doc["scale"] == "tiny" and doc["schema_version"] == C.SCHEMA_VERSION
    assert len({(d["provenance"]["commit"], d["provenance"]["dirty"]) for d in docs.values()}) == 1
    assert next(iter(docs.values()))["provenance"]["dirty"] is False


def test_readme_table_is_the_published_table(run, repo_root):
    table = R.published_table(run)
    assert (run / "papers_table.md").read_text().strip() == table
    begin, end = R.markers("papers-table")
    readme = (repo_root / "README.md").read_text()
    assert readme.split(begin)[1].split(end)[0].strip() == table


def test_table_totals_are_the_sums_over_the_claims_files(run, docs):
    total_line = [line for line in R.published_table(run).splitlines() if line.startswith("| **total**")][0]
    headline = [c for d in docs.values() for c in d["claims"] if c["kind"] == "headline"]
    checks = [c for d in docs.values() for c in d["claims"] if c["kind"] == "check"]
    n = lambda cs, v: sum(c["verdict"] == v for c in cs)  # noqa: E731
    assert (
        f"| **{n(headline, 'reproduced')}/{len(headline)}** | **{n(headline, 'not_reproduced')}** "
        f"| **{n(headline, 'inconclusive')}** | **{n(checks, 'passed')} / {n(checks, 'failed')} / "
        f"{n(checks, 'inconclusive')}** |"
    ) in total_line


def test_each_paper_readme_shows_its_published_claims_table(docs, repo_root):
    begin, end = R.markers("claims-table")
    for slug, doc in docs.items():
        text = R.paper_readme(slug, repo_root).read_text()
        assert text.count(begin) == 1, f"src/methods/{slug}/README.md lacks the generated claims table"
        assert text.split(begin)[1].split(end)[0].strip() == C.claims_table_markdown(doc)


def test_every_published_row_is_what_the_committed_declaration_computes(docs, repo_root):
    """A row is judged by claims.yaml, not by itself: a hand-edited criterion, premise, kind, setting or null, or
    a dropped claim, fails here; so does any verdict, null outcome or margin not computed from its values."""
    for slug, doc in docs.items():
        declaration = C.load_declaration(repo_root / "src" / "methods" / slug / "claims.yaml")
        ids = [row["id"] for row in doc["claims"]]
        declared = C.declarations_by_id(declaration, ids, {row["id"]: row for row in doc["claims"]})
        plain = [c["id"] for c in declaration["claims"] if not c.get("for_each")]
        assert set(plain) <= set(ids), f"{slug}: claims declared but not published: {set(plain) - set(ids)}"
        for row in doc["claims"]:
            assert row["id"] in declared, f"{slug}/{row['id']}: published but not declared in claims.yaml"
            decl = {k: v for k, v in declared[row["id"]].items() if k != "for_each"}
            assert C.row_declaration(row) == decl, f"{slug}/{row['id']}: the row's declaration is not claims.yaml's"
            again = C.recompute_claim(row)
            assert again == row, f"{slug}/{row['id']}: recomputed from its values, the row differs"


def test_no_null_or_family_member_reads_reproduced_in_the_methods_place(docs):
    """The family sweep: every null of a headline claim and every metric its family names (the same quantity
    under another method, an ablation or a trivial alternative) is put in place of the method's metric; a claim
    that reads reproduced must fail under each, on every seed. Lists every claim where a substitution holds."""
    holding = []
    for slug, row in headline_rows(docs):
        if row["verdict"] != "reproduced":
            continue
        read = set(C.criterion_names(row["criterion"]))
        subs = [x["sub"] for x in row["nulls"]] + [
            {metric: member}
            for metric, members in row.get("family", {}).items()
            for member in members
            if member not in read
        ]
        measured = {k: [float("nan") if v is None else v for v in m["values"]] for k, m in row["measured"].items()}
        n = max(len(v) for v in measured.values())
        for sub in subs:
            under = {**measured, **{k: measured[v] for k, v in sub.items()}}
            outcomes = C._per_seed(row["criterion"], under, n)
            if any(o is not False for o in outcomes):
                holding.append(f"{slug}/{row['id']} under {sub}: {outcomes}")
    assert holding == [], "reproduced claims that also hold in place of the method:\n" + "\n".join(holding)


def test_every_headline_claim_has_a_null_that_can_fail_by_more_than_a_tie(docs):
    """A self-tie ("A beats B" with B in A's place) is kept only where B is the mechanism's own ablation."""
    for slug, row in headline_rows(docs):
        assert row["nulls"], f"{slug}/{row['id']}: a headline claim without nulls"
        for x in row["nulls"]:
            assert not x["self_tie"] or x["kind"] == "ablation", f"{slug}/{row['id']}: self-tie null {x['name']}"


def test_a_premise_never_hides_a_refutation(docs):
    for slug, doc in docs.items():
        for row in doc["claims"]:
            if row["per_seed"] and all(o is False for o in row["per_seed"]) and not row.get("refuted_if"):
                assert row["verdict"] in ("not_reproduced", "failed"), f"{slug}/{row['id']}"


def test_every_published_row_is_what_claims_yaml_declares_at_the_run_commit(docs, repo_root):
    """Checked against the declarations, not against the rows themselves: a row whose criterion, nulls, setting
    or kind differ from claims.yaml at the run's commit, a claim dropped, or a verdict that declaration does not
    compute from the row's values, fails here (and `make readme-table` refuses it: report.run_problems)."""
    assert R.run_problems(docs, repo_root) == []


def test_the_published_package_list_is_the_runs_environment(run, docs):
    """environment.txt (pip freeze of the run's environment, published beside it) hashes to the environment digest
    every published claims.json records, and every claims.json carries the schema version."""
    from methods.common.provenance import environment_digest

    listed = (run / "environment.txt").read_text().splitlines()
    assert any(line.startswith("torch==") for line in listed)
    assert {d["provenance"]["environment_digest"] for d in docs.values()} == {environment_digest(listed)}
    assert {d["schema_version"] for d in docs.values()} == {C.SCHEMA_VERSION}
