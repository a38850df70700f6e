"""The combined report (results/REPORT.md) and the README's papers table, from claims.json files.

Runtime per paper is the sum of its jobs' wall-clock seconds from Snakemake's benchmark files
(`<outdir>/benchmarks/<slug>/*.tsv`): job-seconds, which is more than the wall-clock time of a
parallel run and less than that of a serial one.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable

import pandas as pd
import yaml

from .claims import (
    SETTINGS,
    claims_table_markdown,
    declarations_by_id,
    evaluate_claim,
    load_declaration,
    validate_claims,
)
from .diff import moves_markdown
from .io import atomic_path, read_json, write_json
from .provenance import environment_digest, installed_packages, paper_config_digest


def markers(block: str) -> tuple[str, str]:
    """The comment lines that delimit a generated block of the README."""
    return f"<!-- {block}:begin -->", f"<!-- {block}:end -->"


def paper_runtime_seconds(benchmarks_dir: str | Path, slug: str) -> float | None:
    """Sum of the `s` column over the paper's benchmark files; None when there are none."""
    files = sorted(Path(benchmarks_dir, slug).glob("*.tsv"))
    if not files:
        return None
    return float(sum(pd.read_csv(f, sep="\t")["s"].sum() for f in files))


def paper_peak_rss_mb(benchmarks_dir: str | Path, slug: str) -> float | None:
    """Largest `max_rss` (MB) over the paper's jobs; None when there are no benchmark files."""
    files = sorted(Path(benchmarks_dir, slug).glob("*.tsv"))
    peaks = [pd.to_numeric(pd.read_csv(f, sep="\t")["max_rss"], errors="coerce").max() for f in files]
    peaks = [p for p in peaks if pd.notna(p)]
    return float(max(peaks)) if peaks else None


def verdict_counts(doc: dict, kind: str = "headline") -> dict[str, int]:
    """How many claims of `kind` got each verdict (headline: reproduced / not_reproduced /
    inconclusive; check: passed / failed / inconclusive)."""
    keys = (
        ("reproduced", "not_reproduced", "inconclusive") if kind == "headline" else ("passed", "failed", "inconclusive")
    )
    counts = dict.fromkeys(keys, 0)
    for c in doc["claims"]:
        if c["kind"] == kind:
            counts[c["verdict"]] += 1
    return counts


def setting_mix(doc: dict) -> str:
    """'2 paper, 1 reduced, 3 stand-in': the settings of the paper's headline claims."""
    counts = {s: 0 for s in SETTINGS}
    for c in doc["claims"]:
        if c["kind"] == "headline":
            counts[c["setting"]] += 1
    return ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "none"


def paper_reference(ref: str) -> str:
    """An arXiv id as a link to its abstract page; any other reference (e.g. PMLR pages) as plain text."""
    if re.fullmatch(r"\d{4}\.\d{4,5}(v\d+)?", ref):
        return f"[arXiv {ref}](https://arxiv.org/abs/{ref})"
    return ref


def _fmt(value: float | None, scale: float = 1.0, digits: int = 0) -> str:
    return "n/a" if value is None else f"{value / scale:.{digits}f}"


def papers_table(
    docs: Iterable[dict], runtimes: dict[str, float | None], peaks: dict[str, float | None] | None = None
) -> str:
    """One row per paper: headline claims reproduced / not / inconclusive with their settings, the
    checks passed / failed / inconclusive, job time and peak memory; a totals row at the end."""
    peaks = peaks or {}
    lines = [
        "| paper | headline settings | reproduced | not reproduced | inconclusive | checks passed / failed / inconclusive "
        "| job time (s) | peak RSS (GB) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    total = {"reproduced": 0, "not_reproduced": 0, "inconclusive": 0, "headline": 0}
    total_checks = {"passed": 0, "failed": 0, "inconclusive": 0}
    for doc in docs:
        n, k = verdict_counts(doc, "headline"), verdict_counts(doc, "check")
        n_headline = sum(n.values())
        for key in n:
            total[key] += n[key]
        total["headline"] += n_headline
        for key in k:
            total_checks[key] += k[key]
        lines.append(
            f"| `{doc['paper']}`: {doc['title']} ({paper_reference(doc['arxiv'])}) | {setting_mix(doc)} "
            f"| {n['reproduced']}/{n_headline} | {n['not_reproduced']} | {n['inconclusive']} "
            f"| {k['passed']} / {k['failed']} / {k['inconclusive']} "
            f"| {_fmt(runtimes.get(doc['paper']))} | {_fmt(peaks.get(doc['paper']), 1000, 2)} |"
        )
    lines.append(
        f"| **total** | | **{total['reproduced']}/{total['headline']}** | **{total['not_reproduced']}** "
        f"| **{total['inconclusive']}** | **{total_checks['passed']} / {total_checks['failed']} / "
        f"{total_checks['inconclusive']}** | | |"
    )
    return "\n".join(lines)


def _figure_links(doc: dict, claims_file: Path, report_dir: Path) -> list[str]:
    """Evidence PNGs of the paper, as links relative to the report."""
    paper_dir = claims_file.parent
    pngs = []
    for c in doc["claims"]:
        pngs += [e for e in c["evidence"] if e.endswith(".png") and e not in pngs]
    return [f"![{Path(p).stem}]({os.path.relpath(paper_dir / p, report_dir)})" for p in pngs]


def provenance_markdown(docs: list[dict]) -> str:
    """The report header's provenance: commits, dirtiness, packages, hosts and scales of the runs shown."""
    prov = [d["provenance"] for d in docs]
    commits = sorted({f"{p['commit'] or 'unknown'}{' (dirty)' if p['dirty'] else ''}" for p in prov})
    hosts = sorted(
        {
            f"{p['host']['cpu']} ({p['host']['cpus']} CPUs{', ' + p['host']['gpu'] if p['host']['gpu'] else ''})"
            for p in prov
        }
    )
    packages = sorted({f"{k} {v}" for p in prov for k, v in p["packages"].items() if v})
    scales = sorted({p["scale"] for p in prov})
    return "\n".join(
        [
            f"- commit: {', '.join(commits)}",
            f"- scale: {', '.join(scales)}",
            f"- host: {'; '.join(hosts)}",
            f"- packages: {', '.join(packages)}",
        ]
    )


def render_report(
    claims_files: list[str | Path], report_dir: str | Path, runtimes: dict, peaks: dict | None = None
) -> str:
    report_dir = Path(report_dir)
    docs = [read_json(f) for f in claims_files]
    parts = [
        "# Reproduction report",
        "",
        "Every verdict below is computed from the measured values by the claim's criterion. Headline claims "
        "are the papers' own statements; each names its setting (paper: the paper's own model, data and "
        "protocol; reduced: the same, smaller; stand-in: other real data or model; toy: data generated or a "
        "model trained here) and its nulls, the measured alternatives without the paper's effect (the "
        "mechanism's ablation at the same budget, trivial predictors and policies, the run's baselines). A "
        "claim reads reproduced only if its criterion holds on every seed, fails under every null, and beats "
        "the strongest null by a paired 95 % interval that excludes zero; the table shows that null. Checks "
        "are the project's tests of its implementation and premises, listed apart and never counted.",
        "",
        provenance_markdown(docs),
        "",
        papers_table(docs, runtimes, peaks),
        "",
    ]
    for f, doc in zip(claims_files, docs):
        parts += [
            f"## {doc['paper']}: {doc['title']}",
            "",
            f"Scale `{doc['scale']}`; claims file `{os.path.relpath(f, report_dir)}`.",
            "",
            claims_table_markdown(doc),
            "",
        ]
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
    peaks = {s: paper_peak_rss_mb(benchmarks_dir, s) for s in slugs}
    text = render_report(claims_files, Path(report_path).parent, runtimes, peaks)
    with atomic_path(report_path) as tmp:
        tmp.write_text(text)
    table = papers_table([read_json(f) for f in claims_files], runtimes, peaks)
    with atomic_path(table_path) as tmp:
        tmp.write_text(table + "\n")


def splice_readme(readme_text: str, block: str, content: str) -> str:
    """Replace the generated block `block` of the README (between its markers) by `content`."""
    begin, end = markers(block)
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if not pattern.search(readme_text):
        raise ValueError(f"README.md has no generated block {block!r}; add the lines\n{begin}\n{end}")
    return pattern.sub(lambda _: f"{begin}\n{content.strip()}\n{end}", readme_text)


PUBLISHED_RUN = Path("docs") / "run"


def paper_readme(slug: str, root: Path = Path(".")) -> Path:
    return root / "src" / "methods" / slug / "README.md"


def published_docs(run_dir: str | Path) -> dict[str, dict]:
    """{paper: claims document} of a published run (`<run_dir>/<paper>.claims.json`), sorted by paper."""
    return {f.name.removesuffix(".claims.json"): read_json(f) for f in sorted(Path(run_dir).glob("*.claims.json"))}


def publish_run(results: str | Path, root: str | Path = ".", papers: Iterable[str] | None = None) -> list[str]:
    """Publish one tiny run: copy every paper's claims.json, its job time and peak memory, and its claims'
    figures into docs/run/, write the papers table there, fill the README's papers table and each paper
    README's claims table and moved verdicts from them, and rebuild the site (methods.common.website).
    Refuses a run whose papers come from different commits or a dirty tree, so every number the READMEs
    quote comes from one run of one commit, a run that does not match that commit (run_problems: its config
    digest, its rows against claims.yaml) and one made in another environment. Returns the files written."""
    results, root = Path(results), Path(root)
    papers = (
        list(papers)
        if papers is not None
        else sorted(p.stem for p in (root / "workflow" / "rules").glob("*.smk") if p.stem not in {"common", "report"})
    )
    missing = [p for p in papers if not (results / p / "claims.json").exists()]
    if missing:
        raise SystemExit(f"{results}: no claims.json for {missing}; run `make reproduce` (every paper) first")
    docs = {p: read_json(results / p / "claims.json") for p in papers}
    for p, doc in docs.items():
        validate_claims(doc)
        if doc["scale"] != "tiny":
            raise SystemExit(
                f"{results / p / 'claims.json'}: scale {doc['scale']!r}; the README publishes the tiny run"
            )
    commits = {(d["provenance"]["commit"], d["provenance"]["dirty"]) for d in docs.values()}
    if len(commits) != 1 or next(iter(commits))[1] is not False:
        raise SystemExit(
            f"{results}: the papers ran at {sorted(map(str, commits))}; publish one run of one clean "
            f"commit (rerun the stale papers from a clean checkout)"
        )
    problems = run_problems(docs, root)
    if problems:
        raise SystemExit(
            f"{results}: not published; the run does not match its commit "
            f"{next(iter(commits))[0]}:\n- " + "\n- ".join(problems)
        )
    packages = installed_packages()
    digests = {d["provenance"]["environment_digest"] for d in docs.values()}
    if digests != {environment_digest(packages)}:
        raise SystemExit(
            f"{results}: the run's environment digests {sorted(digests)} are not this environment's "
            f"{environment_digest(packages)}; publish from the environment (.venv) that ran it"
        )
    dest = root / PUBLISHED_RUN
    previous = published_docs(dest) if dest.is_dir() else {}
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.glob("*.claims.json"):
        if old.name.removesuffix(".claims.json") not in docs:
            old.unlink()
    written = []
    for p, doc in docs.items():
        write_json(dest / f"{p}.claims.json", doc)
        written.append(str(dest / f"{p}.claims.json"))
    benchmarks = results / "benchmarks"
    usage = {
        p: {"job_seconds": paper_runtime_seconds(benchmarks, p), "peak_rss_mb": paper_peak_rss_mb(benchmarks, p)}
        for p in papers
    }
    write_json(dest / "usage.json", usage)
    with atomic_path(dest / "environment.txt") as tmp:
        tmp.write_text("\n".join(packages) + "\n")
    written.append(str(dest / "environment.txt"))
    table = published_table(dest)
    with atomic_path(dest / "papers_table.md") as tmp:
        tmp.write_text(table + "\n")
    written += [str(dest / "usage.json"), str(dest / "papers_table.md")]
    readme = root / "README.md"
    with atomic_path(readme) as tmp:
        tmp.write_text(splice_readme(readme.read_text(), "papers-table", table))
    written.append(str(readme))
    from .website import build_site, publish_figures

    written += publish_figures(results, docs, root)
    for p, doc in docs.items():
        path = paper_readme(p, root)
        if path.exists():
            text = splice_readme(path.read_text(), "claims-table", claims_table_markdown(doc))
            text = splice_readme(
                _with_block(text, "verdict-moves"), "verdict-moves", moves_markdown(previous.get(p), doc)
            )
            with atomic_path(path) as tmp:
                tmp.write_text(text)
            written.append(str(path))
    written += build_site(root)
    return written


def _with_block(text: str, block: str) -> str:
    """The README text with the generated block's markers, put after its claims table if it had none."""
    begin, end = markers(block)
    if begin in text:
        return text
    claims_end = markers("claims-table")[1]
    return text.replace(claims_end, f"{claims_end}\n\n{begin}\n{end}", 1)


# ---------------------------------------------------------------------------------------------------------
# Publishing checks: a run is compared with the commit it names, not with itself. Its recorded config digest
# must be that of the committed config.yaml (an overlay or an uncommitted edit leaves the tree clean), and
# every row must be what the committed claims.yaml declares, with the verdict that declaration computes.

# the declaration keys a row carries back; a row differing from its declaration in any of them is refused
DECLARED_ROW_KEYS = ("kind", "criterion", "refuted_if", "testable_if", "valid_if", "setting", "family", "deterministic")
NULL_DECLARATION_KEYS = ("name", "kind", "sub", "unequal_budget")


def committed_text(root: Path, commit: str, path: str) -> str | None:
    """`path` as committed at `commit` in the repository at `root`; None when it is not there."""
    proc = subprocess.run(["git", "-C", str(root), "show", f"{commit}:{path}"], capture_output=True, text=True)
    return proc.stdout if proc.returncode == 0 else None


def committed_config(root: Path, commit: str) -> dict:
    """config.yaml at `commit`, completed with the defaults of that commit's config schema as the workflow does
    (workflow/rules/common.smk) before it records each paper's config digest."""
    text = committed_text(root, commit, "config.yaml")
    if text is None:
        raise SystemExit(f"{root}: no config.yaml at commit {commit}; publish from the repository that made the run")
    config = yaml.safe_load(text) or {}
    listing = subprocess.run(
        ["git", "-C", str(root), "ls-tree", "-r", "--name-only", commit, "workflow/schemas"],
        capture_output=True,
        text=True,
    ).stdout.split()
    if "workflow/schemas/config.schema.yaml" in listing:
        from .config import validate_config

        with tempfile.TemporaryDirectory() as tmp:
            for name in listing:
                target = Path(tmp) / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(committed_text(root, commit, name) or "")
            validate_config(config, Path(tmp) / "workflow" / "schemas" / "config.schema.yaml")
    return config


def config_digest_problems(docs: dict[str, dict], root: Path) -> list[str]:
    """Papers whose recorded config digest is not that of their section of the committed config at the run's
    scale: the run used an overlay (--configfile, --config) or an uncommitted config."""
    problems, configs = [], {}
    for paper, doc in docs.items():
        prov = doc["provenance"]
        commit = prov["commit"]
        if commit not in configs:
            configs[commit] = committed_config(root, commit)
        cfg = configs[commit]
        expected = paper_config_digest(cfg, paper)
        if prov.get("config_digest") != expected:
            problems.append(
                f"{paper}: config digest {prov.get('config_digest')} is not {expected}, the digest of the `{paper}` "
                f"section of config.yaml at {commit[:12]} (scale {cfg.get('scale')}): the run was made with another "
                f"config (an overlay, --config, or an uncommitted edit); rerun it with the committed config.yaml"
            )
    return problems


def committed_claims(root: Path, commit: str, paper: str, rows: dict[str, dict]) -> tuple[list[str], dict[str, dict]]:
    """The plain claim ids of src/methods/<paper>/claims.yaml at `commit` and {claim id: declaration} of the run's
    rows (claims.declarations_by_id). ValueError when the file is absent or breaks the claims contract."""
    path = f"src/methods/{paper}/claims.yaml"
    text = committed_text(root, commit, path)
    if text is None:
        raise ValueError(f"{path} does not exist at {commit[:12]}")
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "claims.yaml"
        f.write_text(text)
        try:
            decl = load_declaration(f)
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path} at {commit[:12]}: {str(e).replace(f'{f}: ', '')}") from None
    plain = [c["id"] for c in decl["claims"] if not c.get("for_each")]
    return plain, declarations_by_id(decl, list(rows), rows)


def _declared_nulls(claim: dict) -> list[dict]:
    return [{k: n.get(k) for k in NULL_DECLARATION_KEYS} for n in claim.get("nulls") or [] if n.get("kind") != "family"]


def row_problems(paper: str, row: dict, declared: dict, commit: str) -> list[str]:
    """How a claims.json row departs from its declaration: a declaration key, a null, or a verdict (or per-seed
    outcome) other than what the declaration computes from the row's measured values."""
    where = f"{paper}/{row['id']}"
    out = []
    for key in DECLARED_ROW_KEYS:
        if row.get(key) != declared.get(key):
            out.append(f"{where}: {key} is {row.get(key)!r} in the run, {declared.get(key)!r} in claims.yaml")
    if _declared_nulls(row) != _declared_nulls(declared):
        out.append(f"{where}: its nulls differ from those claims.yaml declares at {commit[:12]}")
    measured = {k: [math.nan if v is None else v for v in m["values"]] for k, m in (row.get("measured") or {}).items()}
    try:
        again = evaluate_claim(declared, measured, row.get("scale", "tiny"))
    except (KeyError, ValueError, TypeError, ZeroDivisionError) as e:
        return out + [f"{where}: its declaration cannot be evaluated on the recorded values: {e}"]
    if again["verdict"] != row.get("verdict") or again["per_seed"] != row.get("per_seed"):
        out.append(
            f"{where}: reads {row.get('verdict')!r} (per seed {row.get('per_seed')}), but claims.yaml at "
            f"{commit[:12]} computes {again['verdict']!r} (per seed {again['per_seed']}) from its measured values"
        )
    return out


def declaration_problems(docs: dict[str, dict], root: Path) -> list[str]:
    """Every departure of the run's rows from the claims.yaml of the run's commit: claims dropped or added, and
    each row's declaration keys, nulls and verdict (row_problems)."""
    problems = []
    for paper, doc in docs.items():
        commit = doc["provenance"]["commit"]
        rows = {c["id"]: c for c in doc["claims"]}
        try:
            plain, declared = committed_claims(root, commit, paper, rows)
        except ValueError as e:
            problems.append(f"{paper}: {e}")
            continue
        dropped = [i for i in plain if i not in rows]
        added = [i for i in rows if i not in declared]
        if dropped:
            problems.append(f"{paper}: claims.yaml at {commit[:12]} declares {dropped}, which the run lacks")
        if added:
            problems.append(f"{paper}: the run has claims {added}, which claims.yaml at {commit[:12]} does not declare")
        for cid, row in rows.items():
            if cid in declared:
                problems += row_problems(paper, row, declared[cid], commit)
    return problems


def environment_problems(docs: dict[str, dict]) -> list[str]:
    """Papers run with an ICML25_* override that changes results or timings, or whose kernels ran as the PyTorch
    reference (provenance.environment, where recorded): the published run is the default environment's."""
    problems = []
    for paper, doc in docs.items():
        env = dict(doc["provenance"].get("environment") or {})
        if env.pop("kernels", "compiled") != "compiled":
            problems.append(
                f"{paper}: its kernels ran as the PyTorch reference (extension not built or ICML25_KERNELS="
                f"reference), so its timings are not the kernels'; build them (`python -m methods.kernels.build`) "
                f"and rerun"
            )
        if env:
            problems.append(f"{paper}: run with {env}; rerun without these overrides to publish")
    return problems


def run_problems(docs: dict[str, dict], root: str | Path) -> list[str]:
    """Everything that keeps a run of one clean commit from being published (empty when it may be)."""
    root = Path(root)
    return config_digest_problems(docs, root) + environment_problems(docs) + declaration_problems(docs, root)


def published_table(run_dir: str | Path) -> str:
    """The papers table of a published run, from its claims files and usage.json."""
    run_dir = Path(run_dir)
    usage = read_json(run_dir / "usage.json")
    docs = published_docs(run_dir)
    return papers_table(
        docs.values(), {p: u["job_seconds"] for p, u in usage.items()}, {p: u["peak_rss_mb"] for p, u in usage.items()}
    )


def publish_main(argv: list[str] | None = None) -> None:
    """`icml25-readme-table [RESULTS]` (make readme-table): publish a tiny run into docs/run/ and the READMEs."""
    import argparse

    ap = argparse.ArgumentParser(description=publish_run.__doc__)
    ap.add_argument("results", nargs="?", default="results", help="the run's results folder (default: results)")
    args = ap.parse_args(argv)
    for f in publish_run(args.results):
        print(f"wrote {f}")


def main(argv: list[str] | None = None) -> None:
    """`publish [RESULTS]`: publish a tiny run into docs/run/ and the READMEs (make readme-table);
    `BLOCK FILE [README]`: put FILE's text into the README's generated BLOCK."""
    import sys

    args = argv if argv is not None else sys.argv[1:]
    if args[:1] == ["publish"]:
        return publish_main(args[1:])
    if len(args) not in (2, 3):
        raise SystemExit(
            "usage: python -m methods.common.report publish [RESULTS_DIR]\n"
            "       python -m methods.common.report BLOCK FILE [README.md]  (e.g. pipeline-benchmark "
            "benchmarks/results/pipeline.md)"
        )
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
