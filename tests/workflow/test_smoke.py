"""Smoke run of the real DAG: killed midway, resumed, then every output checked."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
import yaml

from methods.common.claims import validate_claims


@pytest.fixture(scope="module")
def smoke_outdir(tmp_path_factory, repo_root, run_snakemake):
    ROOT, snakemake = repo_root, run_snakemake
    out = tmp_path_factory.mktemp("smoke")
    args = ["--cores", "2", "--configfile", "config/smoke.yaml", "--config", f"outdir={out}"]
    # First run: killed after a few seconds with the whole process group, as a user's Ctrl-C or a
    # scheduler would; no partial output may be used afterwards.
    proc = subprocess.Popen(
        [sys.executable, "-m", "snakemake", *args],
        cwd=ROOT,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(12)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        subprocess.run([sys.executable, "-m", "snakemake", "--unlock", *args], cwd=ROOT, capture_output=True)
    # Second run completes the DAG: about 10 min in CI, beside a second test worker (SmolLM2 is cut to 2 layers
    # in config/smoke.yaml); the limit leaves room for a slower machine.
    snakemake(*args, timeout=1800)
    snakemake(*args, "--report", out / "report.html")
    return out


def _papers(root):
    return sorted(p.stem for p in (root / "workflow" / "rules").glob("*.smk") if p.stem not in {"common", "report"})


def test_every_paper_writes_valid_claims_listed_in_the_report(smoke_outdir, repo_root):
    report = (smoke_outdir / "REPORT.md").read_text()
    for slug in _papers(repo_root):
        doc = json.loads((smoke_outdir / slug / "claims.json").read_text())
        validate_claims(doc)
        assert doc["scale"] == "smoke" and doc["paper"] == slug
        assert f"## {slug}: " in report
        for c in doc["claims"]:
            assert f"**{c['id']}**" in report, f"{slug}: claim {c['id']} missing from REPORT.md"
            headline = c["kind"] == "headline"
            allowed = (
                ("reproduced", "not_reproduced", "inconclusive") if headline else ("passed", "failed", "inconclusive")
            )
            assert c["verdict"] in allowed, f"{slug}: {c['id']} ({c['kind']}) reads {c['verdict']}"


def test_timemcl_claims_read_the_measured_summary(smoke_outdir):
    doc = json.loads((smoke_outdir / "timemcl" / "claims.json").read_text())
    ids = [c["id"] for c in doc["claims"]]
    assert {"distortion_below_deepar_fxrates", "distortion_below_deepar_parking", "toy_heads_quantize"} <= set(ids)
    summary = json.loads((smoke_outdir / "timemcl" / "metrics_summary.json").read_text())
    for c in doc["claims"]:
        for name, m in c["measured"].items():
            assert m["values"] == summary[name], f"{c['id']}: {name} differs from the measured summary"


def test_timemcl_figures_exist_and_are_linked(smoke_outdir):
    report = (smoke_outdir / "REPORT.md").read_text()
    for png in ("fan_fxrates.png", "toy_brownian.png", "distortion_vs_k.png"):
        data = (smoke_outdir / "timemcl" / "figures" / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"timemcl/figures/{png}" in report
    html = (smoke_outdir / "report.html").read_text(errors="replace")
    assert "distortion_vs_k.png" in html and "claims.json" in html


def test_no_partial_files_left(smoke_outdir):
    leftovers = [p for p in smoke_outdir.rglob("*") if p.name.endswith(".part")]
    assert leftovers == []


def test_orphaned_part_files_are_removed_by_the_next_run(smoke_outdir, run_snakemake, repo_root):
    """A writer killed with SIGKILL leaves `.<name>.*.part`; the next run (not a dry run) removes it."""
    resources = repo_root / yaml.safe_load((repo_root / "config" / "smoke.yaml").read_text()).get(
        "resources", yaml.safe_load((repo_root / "config.yaml").read_text())["resources"]
    )
    orphans = [smoke_outdir / "orphans" / ".claims.json.x1y2.part", resources / "orphans" / ".data.whl.z3.part"]
    for p in orphans:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("half")
    args = ("--configfile", "config/smoke.yaml", "--config", f"outdir={smoke_outdir}")
    run_snakemake("-n", "--forcerun", "report", *args, "--", "report")
    assert all(p.exists() for p in orphans)
    run_snakemake("--cores", "1", "--forcerun", "report", *args, "--", "report")
    assert not any(p.exists() for p in orphans)
    for p in orphans:
        p.parent.rmdir()


def test_rerun_has_nothing_to_do(smoke_outdir, run_snakemake):
    proc = run_snakemake("-n", "--configfile", "config/smoke.yaml", "--config", f"outdir={smoke_outdir}")
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_an_edit_to_a_method_file_reruns_exactly_the_jobs_that_import_it(smoke_outdir, run_snakemake, repo_root):
    """An edited src/methods/outcome_process/mdp.py: every outcome_process job and the report rerun, nothing else. A mere touch reruns nothing (Snakemake compares the recorded content, as DVC does)."""
    method = repo_root / "src" / "methods" / "outcome_process" / "mdp.py"
    text, st = method.read_text(), method.stat()
    args = ("-n", "--configfile", "config/smoke.yaml", "--config", f"outdir={smoke_outdir}")
    try:
        os.utime(method)
        touched = run_snakemake(*args)
        method.write_text(text + "\n# an edit to the method\n")
        edited = run_snakemake(*args)
    finally:
        method.write_text(text)
        os.utime(method, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert "Nothing to be done" in touched.stdout + touched.stderr
    stats = edited.stdout.split("Job stats:")[1].split("total")[0]
    rules = {line.split()[0] for line in stats.splitlines()[3:] if len(line.split()) == 2}
    paper_rules = set(
        re.findall(
            r"^rule (outcome_process_\w+):",
            (repo_root / "workflow" / "rules" / "outcome_process.smk").read_text(),
            re.M,
        )
    )
    assert rules == paper_rules | {"report", "all"}


def test_an_edit_to_figure_code_reruns_only_figure_claims_and_report_jobs(smoke_outdir, run_snakemake, repo_root):
    """Every paper's figures.py and common/plotting.py edited at once: a job's code input is the closure of what
    its step imports, so only the steps that draw (figures, claims) and the report are scheduled, never training."""
    files = [
        repo_root / "src" / "methods" / "common" / "plotting.py",
        *sorted((repo_root / "src" / "methods").glob("*/figures.py")),
    ]
    saved = {f: (f.read_text(), f.stat()) for f in files}
    try:
        for f, (text, _) in saved.items():
            f.write_text(text + "\n# an edit to a figure\n")
        proc = run_snakemake("-n", "--configfile", "config/smoke.yaml", "--config", f"outdir={smoke_outdir}")
    finally:
        for f, (text, st) in saved.items():
            f.write_text(text)
            os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    stats = proc.stdout.split("Job stats:")[1].split("total")[0]
    rules = {line.split()[0] for line in stats.splitlines()[3:] if len(line.split()) == 2}
    papers = {p.stem for p in (repo_root / "workflow" / "rules").glob("*.smk")}
    drawing = {r for r in rules if re.search(r"_(figures?|claims|plots?)$", r)}
    assert drawing, "no figure job was scheduled by an edit to the plotting code"
    assert rules - drawing - papers - {"report", "all"} == set(), (
        f"an edit to figure code reruns {sorted(rules - drawing)}"
    )


# Measured quantities that are wall-clock timings (they move between runs; their claims state a band).
TIMING_METRICS = ("inference_ratio_to_deepar",)


def test_a_second_run_in_another_outdir_gives_the_same_numbers_and_verdicts(smoke_outdir, run_snakemake, tmp_path):
    """Same code, same machine, another outdir: every non-timing metric identical, every verdict equal."""
    other = tmp_path / "again"
    run_snakemake("--cores", "2", "--configfile", "config/smoke.yaml", "--config", f"outdir={other}", "--", "timemcl")
    first = json.loads((smoke_outdir / "timemcl" / "metrics_summary.json").read_text())
    second = json.loads((other / "timemcl" / "metrics_summary.json").read_text())
    assert first.keys() == second.keys()
    moved = [k for k in first if first[k] != second[k] and k not in TIMING_METRICS]
    assert moved == []
    verdicts = lambda out: {
        c["id"]: c["verdict"] for c in json.loads((out / "timemcl" / "claims.json").read_text())["claims"]
    }  # noqa: E731
    assert verdicts(smoke_outdir) == verdicts(other)
