"""profiles/slurm/ against a real single-node Slurm (munged, slurmctld, slurmd started here as root).

Deselect with `-m "not slurm"` where Slurm cannot be installed; CI installs it (.ci/run) and sets
ICML25_REQUIRE_SLURM=1, which turns the skip into a failure so that CI cannot pass without it.
Everything runs in copies of the working tree in tmp dirs; the main tree's results/ and
.snakemake/ are never touched.
"""

import importlib.util
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slurm, pytest.mark.workflow]

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("slurm_cluster", Path(__file__).with_name("slurm_cluster.py"))
slurm_cluster = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(slurm_cluster)

# The profile's first status check waits 20 s, sensible on a busy cluster; here 1 s (~160 s -> ~40 s
# for a toy run, measured).
FAST = ["--slurm-init-seconds-before-status-checks", "1", "--seconds-between-status-checks", "2"]


def copy_worktree(dest: Path) -> Path:
    """The working tree's files that git would commit (tracked and untracked-not-ignored) copied to dest."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True, capture_output=True
    ).stdout.split(b"\0")
    dest.mkdir(parents=True, exist_ok=True)
    for name in filter(None, files):
        src = ROOT / os.fsdecode(name)
        if src.is_file():
            target = dest / os.fsdecode(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(src.read_bytes())
    return dest


def _env(**extra):
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "ICML25_SLURM_PARTITION": slurm_cluster.PARTITION,
        "ICML25_SLURM_ACCOUNT": "",
    }
    env.update(extra)
    return {k: v for k, v in env.items() if v is not None}


def snakemake(cwd, *args, timeout=300, env=None):
    cmd = [sys.executable, "-m", "snakemake", *map(str, args)]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env or _env())


def _squeue_ids():
    out = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i"], capture_output=True, text=True, timeout=10)
    return set(out.stdout.split())


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    why = slurm_cluster.missing()
    if why:
        if os.environ.get("ICML25_REQUIRE_SLURM") == "1":
            pytest.fail(f"ICML25_REQUIRE_SLURM=1 but {why}")
        pytest.skip(why)
    state = tmp_path_factory.mktemp("slurm_state")
    pids = slurm_cluster.start(state)
    yield {"state": state, "pids": pids}
    slurm_cluster.stop(state)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    return copy_worktree(tmp_path_factory.mktemp("slurm_tree") / "repo")


def test_smoke_paper_through_slurm_equals_local_run(slurm, tree):
    """outcome_process's smoke DAG, every job submitted with sbatch; claims.json byte-equal to a local run's."""
    before = _squeue_ids()
    t0 = time.time()
    proc = snakemake(
        tree,
        "--workflow-profile",
        "profiles/slurm",
        *FAST,
        "--configfile",
        "config/smoke.yaml",
        "--config",
        "outdir=out_slurm",
        "--",
        "outcome_process",
    )
    wall = time.time() - t0
    assert proc.returncode == 0, proc.stderr[-4000:]
    log = proc.stdout + proc.stderr
    submitted = log.count("has been submitted with SLURM jobid")
    new_jobs = _squeue_ids() - before  # MinJobAge=300 keeps finished jobs listed
    assert submitted >= 10 and len(new_jobs) >= submitted, (submitted, new_jobs)
    local = snakemake(
        tree,
        "--cores",
        "2",
        "--configfile",
        "config/smoke.yaml",
        "--config",
        "outdir=out_local",
        "--",
        "outcome_process",
    )
    assert local.returncode == 0, local.stderr[-4000:]
    a = (tree / "out_slurm" / "outcome_process" / "claims.json").read_bytes()
    b = (tree / "out_local" / "outcome_process" / "claims.json").read_bytes()
    assert a == b
    print(f"slurm smoke outcome_process: {submitted} sbatch jobs, {wall:.1f} s wall")


def _squeue_partitions():
    out = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i %P"], capture_output=True, text=True, timeout=10)
    return dict(line.split() for line in out.stdout.splitlines() if line.strip())


def test_full_profile_submits_groups_and_gpu_jobs_to_the_gpu_partition(slurm, tree):
    """profiles/slurm-full on the smoke config: outcome_process's simulations go as one group job to the CPU
    partition; its figures, made to ask for a GPU, go to the GPU partition (one counted GPU on the test node)."""
    before = set(_squeue_partitions())
    proc = snakemake(
        tree,
        "--workflow-profile",
        "profiles/slurm-full",
        *FAST,
        "--cores",
        "2",  # the test node's CPUs (the profile's 8 is a group's width on a real node)
        "--retries",
        "0",
        "--configfile",
        "config/smoke.yaml",
        "--config",
        "outdir=out_full_profile",
        "--set-resources",
        "outcome_process_figures:gpu=1",
        "--until",
        "outcome_process_figures",
        "--",
        "outcome_process",
        timeout=900,
        env=_env(ICML25_SLURM_GPU_PARTITION=slurm_cluster.GPU_PARTITION),
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-4000:]
    ids = re.findall(r"has been submitted with SLURM jobid (\d+) \(log: \S*/group_(\w+?)_outcome_process", log)
    groups = {group: jobid for jobid, group in ids}
    assert set(groups) == {"outcome_process_sims", "outcome_process_report"}, log[-4000:]
    assert len(ids) == 2, f"expected two submissions (the group of simulations, the figures): {ids}"
    partitions = _squeue_partitions()
    assert set(groups.values()) <= set(partitions) - before
    assert partitions[groups["outcome_process_sims"]] == slurm_cluster.PARTITION
    assert partitions[groups["outcome_process_report"]] == slurm_cluster.GPU_PARTITION
    assert (tree / "out_full_profile" / "outcome_process" / "figures" / "rate.png").exists()


def _toy(tmp_path, body):
    (tmp_path / "Snakefile").write_text(body)
    return tmp_path


def test_failing_job_is_reported_failed_not_hung(slurm, tmp_path):
    toy = _toy(tmp_path, 'rule fail:\n    output: "fail.txt"\n    shell: "echo deliberate failure >&2; exit 3"\n')
    t0 = time.time()
    proc = snakemake(
        toy, "--workflow-profile", ROOT / "profiles" / "slurm", *FAST, "--retries", "0", "fail.txt", timeout=180
    )
    wall = time.time() - t0
    assert proc.returncode != 0
    assert "Error in rule fail" in proc.stdout + proc.stderr
    assert not (toy / "fail.txt").exists()
    assert wall < 120, f"failure took {wall:.0f} s to be reported"


def test_cancelled_job_is_reported_and_retried(slurm, tmp_path):
    """A job killed by Slurm (scancel, as for node failure or a time limit) fails and is resubmitted once."""
    toy = _toy(tmp_path, 'rule slow:\n    output: "slow.txt"\n    shell: "sleep 8; echo done > {output}"\n')
    before = _squeue_ids()
    cmd = [sys.executable, "-m", "snakemake", "--workflow-profile", str(ROOT / "profiles" / "slurm"), *FAST, "slow.txt"]
    proc = subprocess.Popen(cmd, cwd=toy, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    cancelled = None
    deadline = time.time() + 60
    while cancelled is None and time.time() < deadline:
        out = subprocess.run(["squeue", "-h", "-o", "%i %T"], capture_output=True, text=True).stdout.split()
        running = [out[i] for i in range(0, len(out), 2) if out[i + 1] == "RUNNING" and out[i] not in before]
        if running:
            cancelled = running[0]
            subprocess.run(["scancel", cancelled], check=True)
        time.sleep(0.5)
    try:
        log, _ = proc.communicate(timeout=180)
    finally:
        proc.kill()
    assert cancelled is not None, "the job never started running"
    assert proc.returncode == 0, log[-4000:]
    assert (toy / "slow.txt").read_text().strip() == "done"
    assert log.count("has been submitted with SLURM jobid") == 2, log[-4000:]
    assert f"SLURM jobid {cancelled}" in log and "Error in rule slow" in log


def test_missing_partition_is_a_clear_error_before_submission(slurm, tmp_path):
    toy = _toy(tmp_path, 'rule one:\n    output: "one.txt"\n    shell: "touch {output}"\n')
    before = _squeue_ids()
    t0 = time.time()
    proc = snakemake(
        toy,
        "--workflow-profile",
        ROOT / "profiles" / "slurm",
        *FAST,
        "one.txt",
        env=_env(ICML25_SLURM_PARTITION=None),
        timeout=120,
    )
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "ICML25_SLURM_PARTITION" in out and "invalid partition" in out
    assert _squeue_ids() == before, "a job was submitted although the partition is unset"
    assert time.time() - t0 < 60


def test_daemons_are_stopped_by_pid(slurm):
    slurm_cluster.stop(slurm["state"])
    for name, pid in slurm["pids"].items():
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not slurm_cluster.CONF.exists()
