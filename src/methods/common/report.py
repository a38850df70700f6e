"""The combined report (results/REPORT.md) and the README's papers table, from claims.json files.

Runtime per paper is the sum of its jobs' wall-clock seconds from Snakemake's benchmark files
(`<outdir>/benchmarks/<slug>/*.tsv`): job-seconds, which is more than the wall-clock time of a
parallel run and less than that of a serial one.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable

import pandas as pd

from .claims import claims_table_markdown, validate_claims
from .io import atomic_path, read_json

def markers(block: str) -> tuple[str, str]:
    """The comment lines that delimit a generated block of the README."""
    return f"<!-- {block}:begin -->", f"<!-- {block}:end -->"


def paper_runtime_seconds(benchmarks_dir: str | Path, slug: str) -> float | None:
    """Sum of the `s` column over the paper's benchmark files; None when there are none."""
    files = sorted(Path(benchmarks_dir, slug).glob("*.tsv"))
    if not files:
        return None
    return float(sum(pd.read_csv(f, sep="\t")["s"].sum() for f in files))


def verdict_counts(doc: dict) -> dict[str, int]:
    counts = {"reproduced": 0, "not_reproduced": 0, "inconclusive": 0}
    for c in doc["claims"]:
        counts[c["verdict"]] += 1
    return counts


def paper_reference(ref: str) -> str:
    """An arXiv id as a link to its abstract page; any other reference (e.g. PMLR pages) as plain text."""
    if re.fullmatch(r"\d{4}\.\d{4,5}(v\d+)?", ref):
        return f"[arXiv {ref}](https://arxiv.org/abs/{ref})"
    return ref


def papers_table(docs: Iterable[dict], runtimes: dict[str, float | None]) -> str:
    """One row per paper: claims reproduced / not / inconclusive, scale, runtime."""
    lines = ["| paper | title | scale | claims reproduced | not reproduced | inconclusive | runtime (job-s) |",
             "|---|---|---|---|---|---|---|"]
    for doc in docs:
        n = verdict_counts(doc)
        rt = runtimes.get(doc["paper"])
        lines.append(f"| `{doc['paper']}` | {doc['title']} ({paper_reference(doc['arxiv'])}) "
                     f"| {doc['scale']} | {n['reproduced']}/{len(doc['claims'])} | {n['not_reproduced']} "
                     f"| {n['inconclusive']} | {'n/a' if rt is None else f'{rt:.0f}'} |")
    return "\n".join(lines)


def _figure_links(doc: dict, claims_file: Path, report_dir: Path) -> list[str]:
    """Evidence PNGs of the paper, as links relative to the report."""
    paper_dir = claims_file.parent
    pngs = []
    for c in doc["claims"]:
        pngs += [e for e in c["evidence"] if e.endswith(".png") and e not in pngs]
    return [f"![{Path(p).stem}]({os.path.relpath(paper_dir / p, report_dir)})" for p in pngs]


def render_report(claims_files: list[str | Path], report_dir: str | Path, runtimes: dict) -> str:
    report_dir = Path(report_dir)
    docs = [read_json(f) for f in claims_files]
    parts = ["# Reproduction report", "",
             "Every verdict below is computed from the measured values by the claim's criterion "
             "(`src/methods/common/claims.py`): reproduced on every seed, on none, or inconclusive.", "",
             papers_table(docs, runtimes), ""]
    for f, doc in zip(claims_files, docs):
        parts += [f"## {doc['paper']}: {doc['title']}", "",
                  f"Scale `{doc['scale']}`; claims file `{os.path.relpath(f, report_dir)}`.", "",
                  claims_table_markdown(doc), ""]
        notes = [f"- **{c['id']}**: {c['note']}" for c in doc["claims"] if c.get("note")]
        if notes:
            parts += ["Notes:", *notes, ""]
        parts += _figure_links(doc, Path(f), report_dir) + [""]
    return "\n".join(parts)


def write_reports(claims_files: list[str], report_path: str, table_path: str, benchmarks_dir: str) -> None:
    for f in claims_files:
        validate_claims(read_json(f))
    slugs = [read_json(f)["paper"] for f in claims_files]
    runtimes = {s: paper_runtime_seconds(benchmarks_dir, s) for s in slugs}
    text = render_report(claims_files, Path(report_path).parent, runtimes)
    with atomic_path(report_path) as tmp:
        tmp.write_text(text)
    table = papers_table([read_json(f) for f in claims_files], runtimes)
    with atomic_path(table_path) as tmp:
        tmp.write_text(table + "\n")


def splice_readme(readme_text: str, block: str, content: str) -> str:
    """Replace the generated block `block` of the README (between its markers) by `content`."""
    begin, end = markers(block)
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if not pattern.search(readme_text):
        raise ValueError(f"README.md has no generated block {block!r}; add the lines\n{begin}\n{end}")
    return pattern.sub(lambda _: f"{begin}\n{content.strip()}\n{end}", readme_text)


def main(argv: list[str] | None = None) -> None:
    """`python -m methods.common.report BLOCK FILE [README]`: put FILE's text into the README's BLOCK."""
    import sys

    args = argv if argv is not None else sys.argv[1:]
    if len(args) not in (2, 3):
        raise SystemExit("usage: python -m methods.common.report BLOCK FILE [README.md]  "
                         "(e.g. papers-table results/papers_table.md)")
    block, source = args[0], Path(args[1])
    readme = Path(args[2] if len(args) == 3 else "README.md")
    if not source.exists():
        raise SystemExit(f"{source}: not found; run the workflow (make reproduce) first")
    new = splice_readme(readme.read_text(), block, source.read_text())
    with atomic_path(readme) as tmp:
        tmp.write_text(new)
    print(f"{readme}: block {block!r} updated from {source}")


if __name__ == "__main__":
    main()
