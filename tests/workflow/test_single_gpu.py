"""The single-GPU-machine route of the README: `--resources gpu=N` bounds the GPU jobs running at once.

- At paper scale on one machine a run without `--resources gpu=N` stops before any job (common.smk:
  check_gpu_limit), since every `gpu=1` job would otherwise start at once on cuda:0.
- With `--resources gpu=2` and 4 cores, no more than 2 jobs that ask for a GPU run at the same time: measured
  from Snakemake's own start and end times of each job (.snakemake/metadata) on outcome_process's smoke
  simulations, made to ask for a GPU with --set-resources (their code does not use it, so this runs on a CPU).
"""

import base64
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.workflow

ROOT = Path(__file__).resolve().parents[2]
GPU_RULES = ("outcome_process_rate", "outcome_process_preference", "outcome_process_coverage")


def test_paper_scale_on_one_machine_requires_a_gpu_limit(run_snakemake, monkeypatch):
    monkeypatch.setenv("ICML25_DAG_ONLY", "1")
    proc = run_snakemake(
        "--cores", "1", "--configfile", "config/full.yaml", "--", "results_full/kernels/build.txt", check=False
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "pass --resources gpu=N" in out, out[-3000:]
    assert not (ROOT / "results_full" / "kernels" / "build.txt").exists()


def _intervals(outdir: Path) -> list[tuple[float, float, str]]:
    """(start, end, rule) of every job that wrote under outdir, from Snakemake's metadata."""
    seen = {}
    for f in (ROOT / ".snakemake" / "metadata").iterdir():
        try:
            name = base64.b64decode(f.name.replace("@", "/")).decode()
        except ValueError:
            continue
        if name.startswith(str(outdir)):
            meta = json.loads(f.read_text())
            if meta.get("starttime") and meta.get("endtime"):
                seen[(meta["rule"], meta["starttime"])] = (meta["starttime"], meta["endtime"], meta["rule"])
    return list(seen.values())


def _most_at_once(intervals) -> int:
    events = sorted([(s, 1) for s, _, _ in intervals] + [(e, -1) for _, e, _ in intervals], key=lambda x: (x[0], x[1]))
    running = most = 0
    for _, step in events:
        running += step
        most = max(most, running)
    return most


def test_at_most_n_gpu_jobs_run_at_once(run_snakemake, tmp_path):
    n = 2
    set_gpu = [f"{rule}:gpu=1" for rule in GPU_RULES]
    run_snakemake(
        "--cores", "4", "--resources", f"gpu={n}", "--configfile", "config/smoke.yaml",
        "--config", f"outdir={tmp_path}", "--set-resources", *set_gpu, "--until", *GPU_RULES, "--", "outcome_process",
    )  # fmt: skip
    gpu_jobs = [i for i in _intervals(tmp_path) if i[2] in GPU_RULES]
    assert len(gpu_jobs) >= 2 * n, f"too few GPU jobs ran to test the limit: {len(gpu_jobs)}"
    most = _most_at_once(gpu_jobs)
    print(f"{len(gpu_jobs)} GPU jobs, at most {most} at once (limit {n})")
    assert most <= n, f"{most} jobs asking for a GPU ran at once with --resources gpu={n}"
