"""The paper-scale DAG is one a GPU cluster can run: what each rule asks of the scheduler matches its code.

Read from the rule files and the paper-scale dry run (config/full.yaml), per paper:
- a rule asks for a GPU at paper scale exactly when its script takes the job's device from its resources
  (`job_device(snakemake.resources)`), and one that uses `snakemake.threads` asks for more than one thread;
- mem_mb and runtime grow with the attempt (`per_attempt`, `runtime_per_attempt`), so a job killed for memory
  or time is resubmitted with more (the runtime capped at its partition's limit: test_cluster_submissions.py);
- downloads run on the submit host (`localrule: True`), where compute nodes often have no internet;
- seeds are wildcards: every configured seed has its own jobs, so a failure costs one seed.
"""

import functools
import re
from pathlib import Path

import pytest
import yaml

from methods.common import dvc_stages

ROOT = Path(__file__).resolve().parents[2]
PAPERS = sorted(p.stem for p in (ROOT / "workflow" / "rules").glob("*.smk") if p.stem not in {"common", "report"})
FULL = ("--configfile", "config/full.yaml")


@functools.lru_cache(maxsize=1)
def full_jobs():
    return dvc_stages.dry_run_jobs(ROOT, FULL)


@functools.lru_cache(maxsize=1)
def blocks():
    return dvc_stages.rule_blocks(ROOT)


def _full_config():
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    return dvc_stages._merge(cfg, yaml.safe_load((ROOT / "config" / "full.yaml").read_text()))


def _value_at_full(block, key):
    """The paper-scale value a rule block declares for `key` (a resource or `threads`), as written."""
    m = re.search(
        rf"\b{key}\s*[=:][ \t]*(at_scale|per_attempt|runtime_per_attempt)?\(?[ \t]*([^,\n)]+)"
        rf"(?:,[ \t]*([^,\n)]+))?",
        block,
    )
    if not m:
        return None
    helper, tiny, full = m.groups()
    return (full or tiny).strip() if helper else tiny.strip()


def paper_rules(slug):
    """(name, file, text) of the rules of a paper that run a script in its paper-scale DAG."""
    names = {job["rule"] for job in full_jobs()}
    return [
        (n, *blocks()[n]) for n in sorted(names) if n.startswith(f"{slug}_") and dvc_stages.rule_script(*blocks()[n])
    ]


@pytest.mark.parametrize("slug", PAPERS)
def test_gpu_requests_match_the_code_and_threads_are_given(slug):
    for name, path, block in paper_rules(slug):
        script = dvc_stages.rule_script(path, block).read_text()
        uses_cuda = "job_device(snakemake.resources)" in script
        gpu = _value_at_full(block, "gpu")
        asks_gpu = gpu is not None and gpu not in ("0", "None")
        assert asks_gpu == uses_cuda, (
            f"{name}: asks for gpu={gpu} at paper scale but its script "
            f"{'takes' if uses_cuda else 'never takes'} its device from job_device(snakemake.resources)"
        )
        if "snakemake.threads" in script:
            threads = _value_at_full(block, "threads")
            assert threads not in (None, "1"), f"{name}: its script is multi-threaded but the rule asks for 1 thread"


@pytest.mark.parametrize("slug", PAPERS)
def test_memory_and_time_grow_with_the_attempt(slug):
    for name, path, block in paper_rules(slug):
        for key, helper in (("mem_mb", "per_attempt("), ("runtime", "runtime_per_attempt(")):
            assert re.search(rf"\b{key}={re.escape(helper)}", block), (
                f"{name} ({path.name}): {key} must be {helper}tiny, full) so a resubmission gets more"
            )


def test_downloads_run_on_the_submit_host():
    downloads = [(n, p, b) for n, (p, b) in blocks().items() if "download_pypi.py" in b or n.endswith("_download")]
    assert downloads
    for name, path, block in downloads:
        assert re.search(r"^\s*localrule:\s*True", block, re.M), (
            f"{name} ({path.name}) is a download: add `localrule: True`"
        )


@pytest.mark.parametrize("slug", [p for p in PAPERS if isinstance(_full_config().get(p, {}).get("seeds"), list)])
def test_seeds_are_wildcards_at_paper_scale(slug):
    seeds = _full_config()[slug]["seeds"]
    outputs = [o for job in full_jobs() if job["rule"].startswith(f"{slug}_") for o in job["output"]]
    for seed in seeds:
        assert any(re.search(rf"seed{seed}(?!\d)", o) for o in outputs), (
            f"{slug}: no job of seed {seed} alone at paper scale (use seed_groups / the {{seeds}} wildcard)"
        )
    multi = [
        o
        for job in full_jobs()
        if job["rule"].startswith(f"{slug}_")
        for o in job["output"]
        if re.search(r"\ball\b|_all\.", o)
    ]
    assert not multi, f"{slug}: jobs over all seeds at paper scale: {multi[:3]}"


def test_missing_prerequisites_fail_the_dry_run_naming_what_to_obtain(run_snakemake, monkeypatch):
    """Without the licence-gated files and tokens the paper-scale dry run stops, in the dry run, saying what to get."""
    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "ICML25_DAG_ONLY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", "/nonexistent")
    proc = run_snakemake("-n", *FULL, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, "the paper-scale dry run passed without any licence-gated prerequisite"
    assert "is missing: expected at" in out or "is gated on the Hugging Face Hub" in out, out[-3000:]


def test_every_paper_dry_runs_at_paper_scale_with_the_slurm_profile(run_snakemake, monkeypatch):
    monkeypatch.setenv("ICML25_SLURM_PARTITION", "cpu")
    monkeypatch.setenv("ICML25_SLURM_GPU_PARTITION", "gpu")
    monkeypatch.setenv("ICML25_SLURM_ACCOUNT", "")
    monkeypatch.setenv("ICML25_DAG_ONLY", "1")
    proc = run_snakemake("-n", "--workflow-profile", "profiles/slurm-full")
    stats = (proc.stdout + proc.stderr).split("Job stats:")[1]
    for slug in PAPERS:
        assert re.search(rf"^{slug}_claims\s+1$", stats, re.M), f"{slug}: no claims job in the SLURM dry run"
