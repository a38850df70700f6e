"""The published run as a static site (methods.common.website): current, complete, and usable in a browser.

The browser tests drive Debian's Chromium through Selenium; CI installs both (.ci/run sets
ICML25_REQUIRE_BROWSER=1, so they fail rather than skip there)."""

import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from methods.common import claims as C
from methods.common import report as R
from methods.common import website as W
from methods.common.io import write_json

DECL = {
    "title": "Demo paper",
    "arxiv": "2407.17771",
    "claims": [
        {
            "id": "beats_ablation",
            "kind": "headline",
            "setting": "toy",
            "statement": "A beats its ablation",
            "paper_value": {"value": 1.0, "source": "Table 1"},
            "criterion": "a < b",
            "nulls": [{"name": "ablation", "kind": "ablation", "sub": {"a": "b"}}],
            "evidence": ["figures/curve.png"],
        },
        {
            "id": "beats_mean",
            "kind": "headline",
            "setting": "reduced",
            "statement": "A beats the mean predictor",
            "paper_value": {"value": 2.0, "source": "abstract"},
            "criterion": "a < 1.0",
            "nulls": [{"name": "mean", "kind": "trivial", "sub": {"a": "mean"}}],
        },
        {"id": "finite", "kind": "check", "statement": "the loss is finite", "criterion": "a < 1e9"},
    ],
}


def make_run(root: Path) -> Path:
    """A repository-shaped tree with a finished tiny run of two papers (one of them loses), published."""
    begin, end = R.markers("papers-table")
    (root / "workflow" / "rules").mkdir(parents=True)
    (root / "workflow" / "report").mkdir(parents=True)
    (root / "README.md").write_text(f"intro\n{begin}\n{end}\n")
    cb, ce = R.markers("claims-table")
    for slug, a in (("demo", [0.5, 0.51, 0.5]), ("other", [1.5, 1.6, 1.4])):
        (root / "workflow" / "rules" / f"{slug}.smk").write_text(
            f'rule x:\n    output:\n        figure=report(\n            f"{{OUT}}/figures/curve.png",\n'
            f'            caption="../report/{slug}_curve.rst",\n        ),\n'
        )
        (root / "workflow" / "report" / f"{slug}_curve.rst").write_text(f"The {slug} curve over steps.\n")
        (root / "src" / "methods" / slug).mkdir(parents=True)
        (root / "src" / "methods" / slug / "README.md").write_text(
            f"# {slug}\n## Results\n{cb}\n{ce}\n## Where we differ from the paper and its code\n"
            f"- We use [our data](../../tests/x.py) and a **smaller** model.\n## Other\nrest\n"
        )
        doc = C.evaluate_claims({**DECL, "paper": slug}, {"a": a, "b": [2.0, 2.1, 2.0], "mean": 3.0}, "tiny")
        doc["provenance"].update(commit="c0ffee", dirty=False)
        write_json(root / "results" / slug / "claims.json", doc)
        (root / "results" / slug / "figures").mkdir()
        Image.new("RGB", (1600, 400), "white").save(root / "results" / slug / "figures" / "curve.png")
        bench = root / "results" / "benchmarks" / slug
        bench.mkdir(parents=True)
        (bench / "run.tsv").write_text("s\th:m:s\tmax_rss\n30\t0:00:30\t2500\n")
    with pytest.MonkeyPatch.context() as mp:  # no git repository here: publish_checks tests those checks
        mp.setattr(R, "run_problems", lambda docs, root: [])
        R.publish_run(root / "results", root)
    return root


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return make_run(tmp_path_factory.mktemp("repo"))


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.images, self.alts, self.ids = [], [], [], set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if tag in ("img", "script") and "src" in a:
            self.images.append(a["src"])
            if tag == "img":
                self.alts.append(a.get("alt", ""))
        if tag == "link" and "href" in a:
            self.links.append(a["href"])


def parse(path: Path) -> Links:
    p = Links()
    p.feed(path.read_text())
    return p


def internal_links_resolve(docs_dir: Path) -> list[str]:
    """Every relative link, image and script of every page points to a file (and an anchor) of the site."""
    broken = []
    for page in sorted(docs_dir.rglob("*.html")):
        parsed = parse(page)
        for ref in parsed.links + parsed.images:
            if re.match(r"https?://", ref):
                continue
            target, _, anchor = ref.partition("#")
            path = (page.parent / target).resolve() if target else page
            if not path.exists():
                broken.append(f"{page.relative_to(docs_dir)} -> {ref}")
            elif anchor and anchor not in parse(path).ids:
                broken.append(f"{page.relative_to(docs_dir)} -> {ref} (no such anchor)")
    return broken


def test_the_site_has_an_index_a_page_per_paper_and_small_figures(site):
    docs = site / "docs"
    assert (docs / "index.html").exists() and (docs / "assets" / "filter.js").stat().st_size < 4096
    assert sorted(p.name for p in (docs / "papers").iterdir()) == ["demo.html", "other.html"]
    png = docs / "run" / "figures" / "demo" / "figures__curve.png"
    with Image.open(png) as im:
        assert im.width == W.FIGURE_WIDTH  # scaled down from 1600
    page = parse(docs / "papers" / "demo.html")
    assert page.alts == ["The demo curve over steps."]  # alt text is the report caption
    assert internal_links_resolve(docs) == []


def test_totals_are_the_sums_over_the_claims_files(site):
    text = (site / "docs" / "index.html").read_text()
    docs = R.published_docs(site / "docs" / "run")
    heads = [c for d in docs.values() for c in d["claims"] if c["kind"] == "headline"]
    n = sum(c["verdict"] == "reproduced" for c in heads)
    assert f"<strong>{n}</strong> of <strong>{len(heads)}</strong> headline claims reproduced" in text
    assert text.count('<tr data-setting="') == len(heads)


def test_every_claim_and_the_differ_section_appear_on_its_paper_page(site):
    for slug, doc in R.published_docs(site / "docs" / "run").items():
        page = (site / "docs" / "papers" / f"{slug}.html").read_text()
        for c in doc["claims"]:
            assert f'id="{c["id"]}"' in page and c["verdict"].replace("_", " ") in page
        assert "<strong>smaller</strong>" in page and "our data" in page and "tests/x.py" not in page
        assert "Strongest null" in page and "c0ffee" in page


def test_the_committed_site_is_current(repo_root):
    """`make readme-table` rebuilds docs/ from docs/run; a site older than the published run fails here."""
    stale = [rel for rel, text in W.site_files(repo_root).items() if (repo_root / "docs" / rel).read_text() != text]
    assert stale == [], f"docs/ is stale against docs/run (run `make site`): {stale}"
    assert internal_links_resolve(repo_root / "docs") == []


# --- in a real browser ---------------------------------------------------------------------------------


def _driver():
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        if os.environ.get("ICML25_REQUIRE_BROWSER"):
            pytest.fail("Chromium and chromedriver are required here (apt-get install chromium chromium-driver)")
        pytest.skip("needs Chromium and chromedriver (Debian: apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--allow-file-access-from-files",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=opts, service=webdriver.ChromeService(executable_path=driver))


@pytest.fixture(scope="module")
def browser():
    d = _driver()
    yield d
    d.quit()


@pytest.fixture(scope="module", params=["fixture", "published"])
def docs_dir(request, site, repo_root):
    return site / "docs" if request.param == "fixture" else repo_root / "docs"


def _severe(browser):
    return [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def test_index_loads_and_the_filter_narrows_the_table(browser, docs_dir):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get((docs_dir / "index.html").as_uri())
    assert _severe(browser) == []
    rows = browser.find_elements(By.CSS_SELECTOR, "#claims tbody tr")
    visible = lambda: [r for r in rows if r.is_displayed()]  # noqa: E731
    assert len(visible()) == len(rows) > 0
    assert browser.find_element(By.ID, "shown").text == f"{len(rows)} of {len(rows)} headline claims shown"
    verdicts = {r.get_attribute("data-verdict") for r in rows}
    for verdict in verdicts:
        Select(browser.find_element(By.CSS_SELECTOR, 'select[data-filter="verdict"]')).select_by_value(verdict)
        shown = visible()
        assert shown and all(r.get_attribute("data-verdict") == verdict for r in shown)
        assert len(shown) < len(rows) or len(verdicts) == 1
    Select(browser.find_element(By.CSS_SELECTOR, 'select[data-filter="verdict"]')).select_by_value("")
    assert len(visible()) == len(rows)
    assert _severe(browser) == []


def test_every_paper_page_opens_from_the_index_and_its_figures_load(browser, docs_dir):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get((docs_dir / "index.html").as_uri())
    links = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "#papers a")]
    assert len(links) == len(list((docs_dir / "papers").glob("*.html")))
    for href in links:
        browser.get(href)
        assert browser.find_element(By.TAG_NAME, "h1").text
        assert _severe(browser) == [], href
        for img in browser.find_elements(By.TAG_NAME, "img"):
            script = "return arguments[0].complete && arguments[0].naturalWidth"
            loaded = WebDriverWait(browser, 10).until(lambda d: d.execute_script(script, img))
            assert loaded, f"{href}: figure {img.get_attribute('src')} did not load"
            assert img.get_attribute("alt")
