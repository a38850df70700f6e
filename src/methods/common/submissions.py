"""What a cluster run would submit: each submission (a job, or a group of jobs) of a dry run with its resources.

Snakemake's dry run lists jobs, not submissions, and does not show a group's resources (the sum over the
jobs that run side by side, the runtime summed over the layers that run one after another). This runs the
dry run in-process with the dry-run executor recording what the real executor would be handed: one entry
per submission, with the group's merged resources, and the local jobs (downloads on the submit host) apart,
with their mem_mb on every attempt the profile's `retries` allow.

  python -m methods.common.submissions --workflow-profile profiles/slurm-full          # counts per group
  python -m methods.common.submissions --json plan.json --workflow-profile profiles/slurm-full [target]

Arguments after the options are passed to `snakemake -n` unchanged (a profile, a config overlay, targets).
"""

from __future__ import annotations

import atexit
import collections
import json
import sys

KEPT = ("slurm_partition", "slurm_account", "gpu", "mem_mb", "runtime", "_cores")


def _record(job) -> dict:
    resources = {k: v for k, v in job.resources.items() if k in KEPT}
    resources["threads"] = resources.pop("_cores", 1)
    if job.is_group():
        rules = sorted(j.rule.name for j in job.jobs)
        return {"group": job.groupid, "rules": rules, "jobs": len(rules), "resources": resources}
    return {"group": None, "rules": [job.rule.name], "jobs": 1, "resources": resources}


def _mem_per_attempt(job, workflow) -> list:
    """mem_mb of a job on its first attempt and on each retry the profile allows (`retries`): a local job
    runs on the submit host, whose memory does not grow with the attempt."""
    first, values = job.attempt, []
    for attempt in range(1, (workflow.execution_settings.retries or 0) + 2):
        job.attempt = attempt
        values.append(job.resources.get("mem_mb"))
    job.attempt = first
    return values


def _runs_on_submit_host(workflow, job) -> bool:
    """Workflow.is_local as a cluster executor sees it (under the dry-run executor every job is local)."""
    jobs = job.jobs if job.is_group() else [job]
    return any(
        j.rule.group is None and (j.rule.name in workflow._localrules or j.rule.norun or j.rule.is_template_engine)
        for j in jobs
    )


def plan(snakemake_args: list[str], json_path: str | None = None) -> None:
    """Run `snakemake -n <snakemake_args>`, recording each submission; write them (JSON) at exit."""
    from snakemake import cli
    from snakemake.executors import dryrun

    submitted, local = [], []

    def run_job(self, job):
        if _runs_on_submit_host(self.workflow, job):
            local.append({**_record(job), "mem_mb_per_attempt": _mem_per_attempt(job, self.workflow)})
        else:
            submitted.append(_record(job))
        return original(self, job)

    original = dryrun.Executor.run_job
    dryrun.Executor.run_job = run_job

    def report():
        summary = summarise(submitted, local)
        if json_path:
            with open(json_path, "w") as f:
                json.dump({"submitted": submitted, "local": local, "summary": summary}, f, indent=1)
        print(format_summary(summary), file=sys.stderr)

    atexit.register(report)
    cli.main(["-n", *snakemake_args])


def summarise(submitted: list[dict], local: list[dict]) -> dict:
    per = collections.Counter(s["group"] or s["rules"][0] for s in submitted)
    return {
        "submissions": len(submitted),
        "jobs_submitted": sum(s["jobs"] for s in submitted),
        "local_jobs": len(local),
        "per_group_or_rule": dict(per.most_common()),
    }


def format_summary(summary: dict) -> str:
    lines = [
        f"{summary['submissions']} submissions carry {summary['jobs_submitted']} jobs "
        f"({summary['local_jobs']} more run on the submit host):"
    ]
    lines += [f"  {name:40s} {n:5d}" for name, n in summary["per_group_or_rule"].items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    json_path = None
    if argv[:1] == ["--json"]:
        json_path, argv = argv[1], argv[2:]
    plan(argv, json_path)


if __name__ == "__main__":
    main()
