"""What profiles/slurm-full submits for the whole paper-scale DAG, as the executor plugin would be handed it.

methods.common.submissions runs the profile's dry run with the dry-run executor recording each submission (a
job or a group of jobs, with the group's merged resources). From that plan:
- the full DAG is at most 300 submissions (sites cap a user's queue at 500-1,000 jobs);
- a submission asks for a GPU exactly when it goes to the GPU partition, for at most one GPU;
- each runtime fits its partition's limit, a group's even when resubmitted with its jobs' runtimes x3;
- the profile's groups name existing rules, and its `cores` cover every rule's threads (else silently capped);
- a profile variable left unset stops the dry run, naming it, before anything is built or submitted.
"""

import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from methods.common import dvc_stages

pytestmark = pytest.mark.workflow

ROOT = Path(__file__).resolve().parents[2]
PROFILE = yaml.safe_load((ROOT / "profiles" / "slurm-full" / "config.yaml").read_text())
MAX_SUBMISSIONS = 300
SUBMIT_HOST_MAX_MB = 4096  # what a login node gives one user, at most
ENV = {
    "ICML25_SLURM_PARTITION": "cpu",
    "ICML25_SLURM_GPU_PARTITION": "gpu",
    "ICML25_SLURM_ACCOUNT": "",
    "ICML25_DAG_ONLY": "1",
}


def _env(**overrides):
    env = {**os.environ, **ENV, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.update(overrides)
    return {k: v for k, v in env.items() if v is not None}


@functools.lru_cache(maxsize=1)
def plan():
    out = ROOT / ".snakemake" / "submissions_test.json"
    out.parent.mkdir(exist_ok=True)
    cmd = [sys.executable, "-m", "methods.common.submissions", "--json", str(out)]
    proc = subprocess.run(
        # --forceall: the plan of a clean checkout, whatever this one's resources/ already holds (a download
        # present here is not planned, and the READMEs' counts are what a new user sees)
        [*cmd, "--workflow-profile", "profiles/slurm-full", "--forceall"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=_env(),
    )
    assert proc.returncode == 0 and out.exists(), proc.stderr[-4000:]
    data = json.loads(out.read_text())
    out.unlink()
    return data


def test_full_dag_submits_at_most_300_jobs():
    summary = plan()["summary"]
    print(f"paper-scale DAG: {summary['submissions']} submissions carry {summary['jobs_submitted']} jobs")
    assert summary["jobs_submitted"] > 1000, "the plan lost jobs: the full DAG has well over 1,000"
    assert summary["submissions"] <= MAX_SUBMISSIONS, (
        f"{summary['submissions']} submissions > {MAX_SUBMISSIONS}; group more seconds-long jobs in "
        f"profiles/slurm-full (groups, group-components). Largest: {list(summary['per_group_or_rule'].items())[:8]}"
    )


def test_the_readmes_state_the_plans_counts():
    """profiles/README.md and README.md give the number of submissions (and jobs) a user will see."""
    summary = plan()["summary"]
    downloads = sum(1 for s in plan()["local"] if s["rules"] != ["all"])
    stated = (
        f"**{summary['submissions']} submissions** carrying {summary['jobs_submitted']:,} jobs ({downloads} more, "
        "the downloads, run on the"
    )
    profiles_readme = " ".join((ROOT / "profiles" / "README.md").read_text().split())
    assert stated in profiles_readme, f"profiles/README.md should say: {stated}"
    assert f"grouped jobs ({summary['submissions']} submissions for the full DAG)" in " ".join(
        (ROOT / "README.md").read_text().split()
    ), "README.md's cluster section gives another number of submissions than the plan"


def test_gpu_jobs_go_to_the_gpu_partition_and_the_others_do_not():
    for sub in plan()["submitted"]:
        res, what = sub["resources"], sub["group"] or sub["rules"][0]
        gpus = int(res.get("gpu") or 0)
        assert gpus <= 1, f"{what}: asks for {gpus} GPUs; a group must use its one GPU in turn"
        expected = ENV["ICML25_SLURM_GPU_PARTITION"] if gpus else ENV["ICML25_SLURM_PARTITION"]
        assert res.get("slurm_partition") == expected, f"{what}: gpu={gpus} but partition {res.get('slurm_partition')}"


def test_every_submission_fits_its_partition_time_limit_even_resubmitted():
    defaults = PROFILE["default-resources"]
    attempts = PROFILE["retries"] + 1
    for sub in plan()["submitted"]:
        res, what = sub["resources"], sub["group"] or sub["rules"][0]
        limit = defaults["slurm_gpu_max_runtime" if int(res.get("gpu") or 0) else "slurm_max_runtime"]
        # a single job's runtime is capped at the limit on every attempt (runtime_per_attempt); a group's is the
        # sum of its jobs' in turn, each of which grows with the attempt
        worst = res["runtime"] * (attempts if sub["group"] else 1)
        assert worst <= limit, f"{what}: {worst} min on attempt {attempts} > the partition's {limit}; make it smaller"


def test_downloads_and_other_local_jobs_stay_on_the_submit_host():
    local = {s["rules"][0] for s in plan()["local"]}
    submitted = {r for s in plan()["submitted"] for r in s["rules"]}
    assert "all" in local and any("download" in r for r in local)
    # a download already in results/ (a checkout that has run) is not planned, so no rule is named here
    assert not {r for r in submitted if "download" in r or r.endswith("_fetch")}
    assert not local & submitted


def test_local_jobs_ask_at_most_4_gb_of_the_submit_host_on_every_attempt():
    """Local jobs run on a login node, where sites cap a user's memory at a few GB: each one's mem_mb, as
    Snakemake evaluates it at paper scale on the first attempt and on every retry the profile allows, is at
    most 4 GB (downloads stream to disk; parsing that needs more belongs in a submitted job)."""
    local = plan()["local"]
    rules = {s["rules"][0] for s in local}
    assert {"contextures_openml", "graphgpt_ogb_download", "hypothesaes_fetch"} <= rules, sorted(rules)
    attempts = PROFILE["retries"] + 1
    for job in local:
        per_attempt = job["mem_mb_per_attempt"]
        assert len(per_attempt) == attempts, f"{job['rules'][0]}: {per_attempt} for {attempts} attempts"
        assert per_attempt[0] == job["resources"]["mem_mb"]
        assert max(per_attempt) <= SUBMIT_HOST_MAX_MB, (
            f"{job['rules'][0]} asks the submit host for {per_attempt} MB over its attempts (> "
            f"{SUBMIT_HOST_MAX_MB}): give it mem_mb=per_attempt(tiny, full, cap=SUBMIT_HOST_MB) with full <= the "
            "cap, or move its heavy part into a job submitted to a compute node"
        )


def test_a_local_rule_asking_more_than_its_cap_fails_the_dry_run(tmp_path):
    """per_attempt (common.smk's own text, in a one-rule workflow) refuses a paper-scale value above its cap."""
    common = (ROOT / "workflow" / "rules" / "common.smk").read_text()
    start = common.index("SUBMIT_HOST_MB = ")
    end = common.index("\ndef runtime_per_attempt")
    (tmp_path / "Snakefile").write_text(
        'SCALE = "full"\n'
        + common[start:end]
        + '\nrule fetch:\n    output: "x"\n    localrule: True\n'
        + "    resources:\n        mem_mb=per_attempt(1000, 16000, cap=SUBMIT_HOST_MB),\n"
        + '    shell: "touch {output}"\n'
    )
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-2000:]
    assert "per_attempt(1000, 16000, cap=4000): the full-scale value 16000 exceeds its cap" in out, out[-2000:]


def test_profile_groups_name_existing_rules_and_cores_cover_every_rules_threads():
    rules = set(dvc_stages.rule_blocks(ROOT))
    unknown = sorted(set(PROFILE["groups"]) - rules)
    assert not unknown, f"profiles/slurm-full groups name no rule: {unknown}"
    assert set(PROFILE["group-components"]) <= set(PROFILE["groups"].values())
    most = max(s["resources"]["threads"] for s in plan()["submitted"] if not s["group"])
    assert most <= PROFILE["cores"], "a rule asks for more threads than the profile's cores, which caps them"


@pytest.mark.parametrize(
    "unset, named",
    [
        ("ICML25_SLURM_PARTITION", "slurm_partition"),
        ("ICML25_SLURM_GPU_PARTITION", "slurm_gpu_partition"),
        ("ICML25_SLURM_ACCOUNT", "slurm_account"),
    ],
)
def test_unset_profile_variable_fails_the_dry_run_naming_it(unset, named):
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--workflow-profile", "profiles/slurm-full"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(**{unset: None}),
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, f"the dry run passed with {unset} unset"
    assert re.search(rf"{named} comes from \${unset}, which is not set: export {unset}=", out), out[-3000:]
    assert "Job stats" not in out, "the DAG was built before the check"


def test_empty_partition_fails_the_dry_run():
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--workflow-profile", "profiles/slurm-full"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(ICML25_SLURM_GPU_PARTITION=""),
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "slurm_gpu_partition ($ICML25_SLURM_GPU_PARTITION) is empty" in out, out[-3000:]


@pytest.mark.parametrize(
    "profile, expected",
    [
        (("--workflow-profile", "profiles/slurm-full"), "is the compute node itself once the job runs on the cluster"),
        (("--cores", "1", "--configfile", "config/full.yaml"), "nothing answers at http://127.0.0.1:"),
    ],
)
def test_hypothesaes_endpoint_must_answer_where_the_jobs_run(profile, expected):
    """hypothesaes_run calls its LLM endpoint for hours: 127.0.0.1 is refused when the jobs go to a cluster (it
    is the node itself), and an endpoint that does not answer from the submit host stops the dry run."""
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", *profile, "--", "hypothesaes"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(ICML25_DAG_ONLY=None, OPENAI_API_KEY="test-key"),
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and expected in out and "hypothesaes.interpreter.llm.endpoint" in out, out[-3000:]
