"""The documentation speaks to users: a README a newcomer reads in one sitting, no references they cannot follow."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted(
    p
    for p in ROOT.rglob("*.md")
    if not any(part.startswith(".") for part in p.relative_to(ROOT).parts) and "build" not in p.relative_to(ROOT).parts
)
ISSUE_REF = re.compile(r"\bissues? ?#?(\d+|[A-Z]\d)\b", re.I)


def test_readme_fits_in_200_lines():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 200


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_issue_numbers_and_no_paths_outside_the_repository(doc):
    text = doc.read_text()
    assert not ISSUE_REF.search(text), (
        f"{doc.relative_to(ROOT)}: refers to an issue ({ISSUE_REF.search(text).group(0)})"
    )
    for target in re.findall(r"\]\(([^)#]+)\)|`(\.\./[^`]+)`", text):
        link = next(t for t in target if t)
        if re.match(r"[a-z]+://", link):
            continue
        resolved = (doc.parent / link).resolve()
        assert resolved.is_relative_to(ROOT), f"{doc.relative_to(ROOT)}: points outside the repository: {link}"


def test_every_paper_has_a_readme_with_the_same_sections():
    papers = sorted(p.stem for p in (ROOT / "workflow" / "rules").glob("*.smk") if p.stem not in {"common", "report"})
    sections = ["## What is implemented", "## Data", "## Results", "## Where we differ from the paper and its code"]
    for slug in papers:
        path = ROOT / "src" / "methods" / slug / "README.md"
        assert path.exists(), f"{slug} has no README"
        text = path.read_text()
        found = [text.find(s) for s in sections]
        assert all(i >= 0 for i in found) and found == sorted(found), f"{slug}/README.md: sections {sections} in order"
