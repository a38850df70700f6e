"""The published run as a static web site: an index of every paper and claim, filterable, and a page per paper.

    python -m methods.common.website       (make site; `make readme-table` runs it after publishing)

Reads the published run only (`docs/run/`: the claims files, usage.json, and the figures and their captions
that publishing copied into `docs/run/figures/`) and each paper README's "Where we differ" section, and
writes plain HTML and CSS with one small script for the filter into `docs/` (`docs/index.html`,
`docs/papers/<paper>.html`, `docs/assets/`), so that GitHub Pages can serve the `docs/` folder as it is.
The output depends on nothing but those inputs (no dates), so a test can rebuild it and compare.
"""

from __future__ import annotations

import html
import re
import shutil
import sys
from pathlib import Path

from .claims import SETTINGS, format_value, strongest_null_cell
from .io import atomic_path, read_json, write_json
from .report import PUBLISHED_RUN, paper_readme, paper_reference, published_docs, setting_mix

SITE = Path("docs")
FIGURES = PUBLISHED_RUN / "figures"
FIGURE_WIDTH = 960  # published figures are scaled down to this width at most (pixels)
VERDICTS = ("reproduced", "not_reproduced", "inconclusive")

CSS = """\
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:72rem;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.6rem}h2{font-size:1.3rem;margin-top:2rem}h3{font-size:1.05rem}
a{color:#0b57d0}table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top}
.scroll{overflow-x:auto}.v-reproduced,.v-passed{color:#0a7d2c;font-weight:600}
.v-not_reproduced,.v-failed{color:#b3261e;font-weight:600}.v-inconclusive{color:#8a5a00;font-weight:600}
.claim{border:1px solid #ddd;border-radius:6px;padding:.5rem 1rem;margin:1rem 0}
.filters{display:flex;flex-wrap:wrap;gap:1rem;margin:1rem 0}.filters label{display:flex;flex-direction:column;font-size:.85rem}
figure{margin:1rem 0}figure img{max-width:100%;height:auto;border:1px solid #eee}figcaption{font-size:.85rem;color:#444}
code{font-size:.85em;background:#f4f4f4;padding:0 .2em;border-radius:3px;word-break:break-word}
.muted{color:#555;font-size:.9rem}
"""

JS = """\
// Narrows the claims table to the chosen setting, verdict and paper, and says how many rows are shown.
(function () {
  var table = document.getElementById("claims");
  if (!table) return;
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var selects = document.querySelectorAll("select[data-filter]");
  function apply() {
    var shown = 0;
    rows.forEach(function (row) {
      var ok = Array.prototype.every.call(selects, function (s) {
        return !s.value || row.dataset[s.dataset.filter] === s.value;
      });
      row.hidden = !ok;
      if (ok) shown += 1;
    });
    document.getElementById("shown").textContent = shown + " of " + rows.length + " headline claims shown";
  }
  Array.prototype.forEach.call(selects, function (s) { s.addEventListener("change", apply); });
  apply();
})();
"""


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _page(title: str, body: str, depth: int) -> str:
    up = "../" * depth
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<title>{_e(title)}</title>\n<link rel="stylesheet" href="{up}assets/site.css">\n</head>\n<body>\n'
        f"{body}\n</body>\n</html>\n"
    )


def _verdict(v: str) -> str:
    return f'<span class="v-{_e(v)}">{_e(v.replace("_", " "))}</span>'


def _provenance(doc: dict) -> str:
    p = doc["provenance"]
    host = p["host"]
    packages = ", ".join(f"{k} {v}" for k, v in sorted(p["packages"].items()) if v)
    return (
        f'<ul class="muted"><li>commit <code>{_e(p["commit"])}</code>{" (dirty)" if p["dirty"] else ""}, '
        f"scale {_e(p['scale'])}, config digest <code>{_e(p['config_digest'])}</code></li>"
        f"<li>host: {_e(host['cpu'])} ({_e(host['cpus'])} CPUs{', ' + _e(host['gpu']) if host['gpu'] else ''}), "
        f"{_e(host['system'])}, Python {_e(host['python'])}</li><li>packages: {_e(packages)}</li></ul>"
    )


def _md_inline(text: str) -> str:
    """Inline markdown of the claims tables (`code`, **bold**, <br>) as HTML, the rest escaped."""
    out = _e(text).replace("&lt;br&gt;", "<br>")
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)


def differ_section(readme: Path) -> str:
    """The README's "Where we differ from the paper and its code" section as HTML; links to files of the
    repository (which the site does not serve) become plain text."""
    import markdown

    if not readme.exists():
        return "<p>No README.</p>"
    lines = readme.read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("## ") and "differ" in line.lower()), None)
    if start is None:
        return "<p>The paper's README has no such section.</p>"
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    text = "\n".join(lines[start + 1 : end])
    text = re.sub(r"\[([^\]]+)\]\((?!https?://)[^)]*\)", r"\1", text)
    return markdown.markdown(text, extensions=["tables"])


def _claim_section(c: dict) -> str:
    n = max(len(m["values"]) for m in c["measured"].values())
    head = "".join(f"<th>seed {i}</th>" for i in range(n))
    rows = []
    for name, m in c["measured"].items():
        cells = "".join(f"<td>{'NaN' if v is None else f'{v:.4g}'}</td>" for v in m["values"])
        cells += "<td></td>" * (n - len(m["values"]))
        rows.append(f"<tr><td><code>{_e(name)}</code></td>{cells}<td>{_e(format_value(m))}</td></tr>")
    outcome = "".join(f"<td>{_e({True: 'holds', False: 'fails', None: 'undefined'}[o])}</td>" for o in c["per_seed"])
    rows.append(f"<tr><td>criterion</td>{outcome}{'<td></td>' * (n - len(c['per_seed']))}<td></td></tr>")
    premise = ""
    if c.get("testable_if"):
        premise = (
            f"<p>Premise: <code>{_e(c['testable_if'])}</code>, "
            f"{'met' if c.get('testable') else '<strong>not met</strong>'}.</p>"
        )
    nulls = ""
    if c["kind"] == "headline":
        items = "".join(
            f"<li><strong>{_e(x['name'])}</strong> ({_e(x['kind'])}): "
            + ", ".join(f"<code>{_e(k)}</code> → <code>{_e(v)}</code>" for k, v in x["sub"].items())
            + f"; {'holds on some seed' if x['holds'] else 'fails on every seed'}</li>"
            for x in c["nulls"]
        )
        nulls = (
            f"<p>Strongest null: {_md_inline(strongest_null_cell(c))}</p>"
            f"<details><summary>All {len(c['nulls'])} nulls</summary><ul>{items}</ul></details>"
        )
    paper = ""
    if c.get("paper_value"):
        paper = f'<p>Paper: {_e(c["paper_value"]["value"])} <span class="muted">({_e(c["paper_value"]["source"])})</span></p>'
    setting = f" · setting <strong>{_e(c['setting'])}</strong>" if c.get("setting") else ""
    note = f'<p class="muted">{_e(c["note"])}</p>' if c.get("note") else ""
    return (
        f'<section class="claim" id="{_e(c["id"])}"><h3>{_e(c["id"])}</h3><p>{_e(c["statement"])}</p>{paper}'
        f'<p>Verdict: {_verdict(c["verdict"])}{setting}. <span class="muted">{_e(c["verdict_reason"])}</span></p>'
        f"<p>Criterion: <code>{_e(c['criterion'])}</code>"
        + (f"; refuted if <code>{_e(c['refuted_if'])}</code>" if c.get("refuted_if") else "")
        + f"</p>{premise}{nulls}"
        f'<div class="scroll"><table><thead><tr><th>measured</th>{head}<th>mean ± sd</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>{note}</section>"
    )


def paper_page(doc: dict, figures: list[dict], differ: str) -> str:
    headline = [c for c in doc["claims"] if c["kind"] == "headline"]
    checks = [c for c in doc["claims"] if c["kind"] == "check"]
    counts = {v: sum(c["verdict"] == v for c in headline) for v in VERDICTS}
    figs = "".join(
        f'<figure><img src="../{_e(f["file"])}" alt="{_e(f["caption"])}">'
        f"<figcaption>{_e(f['caption'])}</figcaption></figure>"
        for f in figures
    )
    check_rows = "".join(
        f'<tr><td><a href="#{_e(c["id"])}">{_e(c["id"])}</a>: {_e(c["statement"])}</td>'
        f"<td><code>{_e(c['criterion'])}</code></td><td>{_verdict(c['verdict'])}</td></tr>"
        for c in checks
    )
    body = (
        f'<p><a href="../index.html">← all papers</a></p>'
        f"<h1>{_e(doc['title'])}</h1><p>{_md_link(paper_reference(doc['arxiv']))} · <code>{_e(doc['paper'])}</code></p>"
        f"<p>{len(headline)} headline claims: {counts['reproduced']} reproduced, {counts['not_reproduced']} not "
        f"reproduced, {counts['inconclusive']} inconclusive ({_e(setting_mix(doc))}); {len(checks)} checks.</p>"
        f"<h2>Headline claims</h2>{''.join(_claim_section(c) for c in headline)}"
        + (
            f'<h2>Checks</h2><p class="muted">The project\'s own tests of its implementation and premises; '
            f'never counted as reproductions.</p><div class="scroll"><table><thead><tr><th>check</th>'
            f"<th>criterion</th><th>result</th></tr></thead><tbody>{check_rows}</tbody></table></div>"
            f"{''.join(_claim_section(c) for c in checks)}"
            if checks
            else ""
        )
        + (f"<h2>Figures</h2>{figs}" if figs else "")
        + f"<h2>Where we differ from the paper and its code</h2>{differ}"
        f"<h2>Provenance of the run</h2>{_provenance(doc)}"
    )
    return _page(f"{doc['paper']}: {doc['title']}", body, depth=1)


def _md_link(text: str) -> str:
    """'[arXiv 1](https://…)' as an HTML link; anything else escaped."""
    m = re.fullmatch(r"\[([^\]]+)\]\((https?://[^)]+)\)", text)
    return f'<a href="{_e(m.group(2))}">{_e(m.group(1))}</a>' if m else _e(text)


def index_page(docs: dict[str, dict], usage: dict) -> str:
    headline = [(p, c) for p, d in docs.items() for c in d["claims"] if c["kind"] == "headline"]
    checks = [c for d in docs.values() for c in d["claims"] if c["kind"] == "check"]
    count = lambda cs, v: sum(c["verdict"] == v for c in cs)  # noqa: E731
    hc = [c for _, c in headline]
    paper_rows = []
    for p, d in docs.items():
        h = [c for c in d["claims"] if c["kind"] == "headline"]
        k = [c for c in d["claims"] if c["kind"] == "check"]
        seconds = (usage.get(p) or {}).get("job_seconds")
        paper_rows.append(
            f'<tr><td><a href="papers/{_e(p)}.html">{_e(p)}</a>: {_e(d["title"])}</td><td>{_e(setting_mix(d))}</td>'
            f"<td>{count(h, 'reproduced')}/{len(h)}</td><td>{count(h, 'not_reproduced')}</td>"
            f"<td>{count(h, 'inconclusive')}</td><td>{count(k, 'passed')} / {count(k, 'failed')} / "
            f"{count(k, 'inconclusive')}</td><td>{'n/a' if seconds is None else f'{seconds:.0f}'}</td></tr>"
        )
    claim_rows = "".join(
        f'<tr data-setting="{_e(c["setting"])}" data-verdict="{_e(c["verdict"])}" data-paper="{_e(p)}">'
        f'<td><a href="papers/{_e(p)}.html">{_e(p)}</a></td>'
        f'<td><a href="papers/{_e(p)}.html#{_e(c["id"])}">{_e(c["id"])}</a>: {_e(c["statement"])}</td>'
        f"<td>{_e(c['setting'])}</td><td>{_md_inline(strongest_null_cell(c))}</td><td>{_verdict(c['verdict'])}</td></tr>"
        for p, c in headline
    )

    def select(name: str, label: str, values) -> str:
        options = "".join(f'<option value="{_e(v)}">{_e(v.replace("_", " "))}</option>' for v in values)
        return f'<label>{label}<select data-filter="{name}"><option value="">all</option>{options}</select></label>'

    first = next(iter(docs.values()))["provenance"]
    body = (
        "<h1>icml25-repro: the published run</h1>"
        f"<p>{len(docs)} ICML 2025 papers, each claim's verdict computed from our run at the tiny scale. "
        f"Commit <code>{_e(first['commit'])}</code>{' (dirty)' if first['dirty'] else ''}, "
        f"{_e(first['host']['cpu'])}.</p>"
        f"<p><strong>{count(hc, 'reproduced')}</strong> of <strong>{len(hc)}</strong> headline claims reproduced, "
        f"<strong>{count(hc, 'not_reproduced')}</strong> not reproduced, <strong>{count(hc, 'inconclusive')}"
        f"</strong> inconclusive; checks {count(checks, 'passed')} passed, {count(checks, 'failed')} failed, "
        f"{count(checks, 'inconclusive')} inconclusive.</p>"
        '<p class="muted">A headline claim is the paper\'s own statement; it reads reproduced only if its criterion '
        "holds on every seed, fails under every null (the paper's ingredient removed at equal budget, trivial "
        "predictors and policies, the run's baselines) and beats the strongest null by a paired 95 % interval "
        "that excludes zero. Settings: paper (its own model, data and protocol), reduced (the same, smaller), "
        "stand-in (other real data or model), toy (data generated or a model trained here).</p>"
        '<h2>Papers</h2><div class="scroll"><table id="papers"><thead><tr><th>paper</th><th>settings</th>'
        "<th>reproduced</th><th>not reproduced</th><th>inconclusive</th><th>checks passed / failed / inconclusive"
        f"</th><th>job time (s)</th></tr></thead><tbody>{''.join(paper_rows)}</tbody></table></div>"
        '<h2>Headline claims</h2><div class="filters">'
        + select("setting", "setting", SETTINGS)
        + select("verdict", "verdict", VERDICTS)
        + select("paper", "paper", list(docs))
        + '</div><p id="shown" class="muted"></p><div class="scroll"><table id="claims"><thead><tr><th>paper</th>'
        f"<th>claim</th><th>setting</th><th>strongest null</th><th>verdict</th></tr></thead><tbody>{claim_rows}"
        '</tbody></table></div><script src="assets/filter.js"></script>'
    )
    return _page("icml25-repro: the published run", body, depth=0)


def site_files(root: str | Path = ".") -> dict[str, str]:
    """{path relative to docs/: text} of the whole site, from the published run and the paper READMEs."""
    root = Path(root)
    run = root / PUBLISHED_RUN
    docs = published_docs(run)
    if not docs:
        raise SystemExit(f"{run}: no published run; publish one first (make reproduce, then make readme-table)")
    usage = read_json(run / "usage.json") if (run / "usage.json").exists() else {}
    figures = read_json(run / "figures.json") if (run / "figures.json").exists() else {}
    files = {"index.html": index_page(docs, usage), "assets/site.css": CSS, "assets/filter.js": JS}
    for p, doc in docs.items():
        files[f"papers/{p}.html"] = paper_page(doc, figures.get(p, []), differ_section(paper_readme(p, root)))
    return files


def build_site(root: str | Path = ".") -> list[str]:
    """Write the site into docs/ (the pages of papers no longer published are removed); returns the paths."""
    root = Path(root)
    out = root / SITE
    files = site_files(root)
    for old in (out / "papers").glob("*.html"):
        if f"papers/{old.name}" not in files:
            old.unlink()
    written = []
    for rel, text in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            tmp.write_text(text)
        written.append(str(path))
    return written


def figure_captions(root: str | Path = ".") -> list[tuple[str, re.Pattern, str]]:
    """(paper, pattern of the figure's path under the paper's results folder, caption text) for every figure a
    rule file puts in the report with a caption."""
    root = Path(root)
    found = []
    for smk in sorted((root / "workflow" / "rules").glob("*.smk")):
        text = smk.read_text()
        for path, caption in re.findall(r'report\(\s*f?"([^"]+\.png)",\s*caption="([^"]+)"', text):
            rel = path.split("}/", 1)[1] if path.startswith("{") and "}/" in path else path
            pattern = re.escape(rel)
            pattern = re.sub(r"\\\{\\\{[^}]*\\\}\\\}|\\\{[^}]*\\\}", "[^/]+", pattern)
            caption_file = (smk.parent / caption).resolve()
            words = " ".join(caption_file.read_text().split()) if caption_file.exists() else ""
            found.append((smk.stem, re.compile(pattern + "$"), words))
    return found


def publish_figures(results: str | Path, docs: dict[str, dict], root: str | Path = ".") -> list[str]:
    """Copy every evidence PNG of the published claims into docs/run/figures/<paper>/, scaled down to
    FIGURE_WIDTH, and write docs/run/figures.json with each figure's caption (its alt text on the site)."""
    from PIL import Image

    results, root = Path(results), Path(root)
    dest = root / FIGURES
    captions = figure_captions(root)
    index: dict[str, list[dict]] = {}
    written = []
    for p, doc in docs.items():
        if (dest / p).exists():
            shutil.rmtree(dest / p)
        pngs = []
        for c in doc["claims"]:
            pngs += [e for e in c["evidence"] if e.endswith(".png") and e not in pngs]
        for rel in pngs:
            src = results / p / rel
            if not src.exists():
                raise SystemExit(f"{src}: evidence of a published claim is missing; rerun the paper ({p})")
            name = rel.replace("/", "__")
            target = dest / p / name
            target.parent.mkdir(parents=True, exist_ok=True)
            with Image.open(src) as im:
                if im.width > FIGURE_WIDTH:
                    im = im.resize((FIGURE_WIDTH, round(im.height * FIGURE_WIDTH / im.width)), Image.LANCZOS)
                with atomic_path(target) as tmp:
                    im.save(tmp, format="PNG", optimize=True)
            caption = next((cap for paper, pat, cap in captions if paper == p and pat.search(rel)), "")
            index.setdefault(p, []).append(
                {"file": f"run/figures/{p}/{name}", "source": rel, "caption": caption or f"{p}: {rel}"}
            )
            written.append(str(target))
    write_json(root / PUBLISHED_RUN / "figures.json", index)
    return written + [str(root / PUBLISHED_RUN / "figures.json")]


def main(argv: list[str] | None = None) -> int:
    for path in build_site("."):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
