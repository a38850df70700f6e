"""Provenance of a result: which code, packages, configuration and machine produced it.

Every claims.json carries it (as lm-evaluation-harness records its environment with every result), so
two runs can be compared knowing what differed between them (`methods.common.diff`).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Iterable, Mapping

REPO_ROOT = Path(__file__).resolve().parents[3]
CORE_PACKAGES = ("torch", "numpy", "snakemake", "pandas", "transformers", "datasets")
# Set by the workflow (workflow/rules/common.smk) for every job: {paper: digest of its config section}.
CONFIG_DIGESTS_ENV = "ICML25_CONFIG_DIGESTS"


def config_digest(section) -> str:
    """sha256 (16 hex digits) of a config section, independent of key order."""
    return hashlib.sha256(json.dumps(section, sort_keys=True, default=str).encode()).hexdigest()[:16]


# Top-level config sections a paper's jobs read besides its own: the shared LM substrate
# (workflow/rules/shared/lm.smk, config section `lm`) decides the model of three papers.
SHARED_SECTIONS = {"alspec": ("lm",), "nestquant": ("lm",), "slim": ("lm",)}


def paper_config(config: Mapping, paper: str) -> dict:
    """Every config section a paper's results depend on: the scale, its own section and the shared ones it reads."""
    return {
        "scale": config.get("scale"),
        paper: config.get(paper),
        **{s: config.get(s) for s in SHARED_SECTIONS.get(paper, ())},
    }


def paper_config_digest(config: Mapping, paper: str) -> str:
    """The config digest a paper's claims.json records (its `paper_config`)."""
    return config_digest(paper_config(config, paper))


def config_digests(config: Mapping, papers: Iterable[str]) -> str:
    """The value of CONFIG_DIGESTS_ENV: every paper's config digest (`paper_config_digest`), as JSON."""
    return json.dumps({p: paper_config_digest(config, p) for p in papers})


def snakemake_record(output: str, workdir: str | Path = ".") -> Path:
    """Where Snakemake (9.x, `.snakemake/metadata/`) keeps its record of the job that wrote `output` (the path as
    the rule declares it): its params, code and input checksums, from which it decides what to rerun."""
    from base64 import urlsafe_b64encode

    root = Path(workdir) / ".snakemake" / "metadata"
    key = urlsafe_b64encode(output.encode()).decode()
    try:
        max_len = os.pathconf(root if root.exists() else workdir, "PC_NAME_MAX") or 255
    except (OSError, ValueError):
        max_len = 255
    chunks = [key[i : i + max_len - 1] for i in range(0, len(key), max_len - 1)]
    return root.joinpath(*["@" + c for c in chunks[:-1]], chunks[-1])


def unrecorded_results_of_another_config(
    outdir: str, config: Mapping, papers: Iterable[str], workdir: str | Path = "."
) -> list[str]:
    """Papers whose `{outdir}/<paper>/claims.json` records another config digest than `config`'s while Snakemake has
    no record of the job that wrote it (a results folder copied in, or .snakemake removed): Snakemake reruns a job
    whose params changed only from its record, so without one it would call these results current. One message
    per paper, naming the file, both digests and the fix."""
    problems = []
    for paper in papers:
        claims = f"{outdir}/{paper}/claims.json"
        path = Path(workdir) / claims
        if not path.exists() or snakemake_record(claims, workdir).exists():
            continue
        try:
            recorded = (json.loads(path.read_text()).get("provenance") or {}).get("config_digest")
        except (OSError, ValueError):
            continue  # not ours to judge: the claims job rewrites it when it runs
        current = paper_config_digest(config, paper)
        if recorded is not None and recorded != current:
            problems.append(
                f"{claims} was made with another config (digest {recorded}; this config's is {current}) and Snakemake "
                f"has no record of the jobs that made it (a results folder copied in?), so it would call them current: "
                f"remove {outdir}/{paper} and rerun `snakemake {paper}`, or restore results of this config with "
                f"`make pull`"
            )
    return problems


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def git_state() -> dict:
    """The commit of the checkout and whether it differs from it: a changed tracked file anywhere, or an
    untracked file under src/ or workflow/, where it could change a result (None outside a git checkout)."""
    commit = _git("rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None}
    tracked = _git("status", "--porcelain", "--untracked-files=no")
    untracked = _git("status", "--porcelain", "--untracked-files=all", "--", "src", "workflow")
    return {"commit": commit, "dirty": bool(tracked) or bool(untracked)}


def installed_packages() -> list[str]:
    """`name==version` of every installed distribution, sorted (what `pip freeze` lists, without a subprocess)."""
    names = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            names[name.lower()] = f"{name}=={dist.version}"
    return [names[k] for k in sorted(names)]


def environment_digest(packages: list[str] | None = None) -> str:
    """sha256 (16 hex digits) of the installed packages; publishing writes the list beside the run."""
    return hashlib.sha256("\n".join(packages if packages is not None else installed_packages()).encode()).hexdigest()[
        :16
    ]


def package_versions(names: Iterable[str]) -> dict[str, str | None]:
    versions = {}
    for name in dict.fromkeys(names):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gpu_name() -> str | None:
    """The first CUDA device's name, only if torch is already imported (no import just for this)."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available():
        return None
    return torch.cuda.get_device_name(0)


def host() -> dict:
    return {
        "system": platform.platform(),
        "python": platform.python_version(),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "gpu": gpu_name(),
    }


# ICML25_* variables that change a result or a timing (read by src/methods/kernels and csrc/): the kernels'
# implementation, the CPU paths and plans, the CUDA kernels' variants and the k-major chunk sizes.
ENV_WITH_EFFECT = {
    "ICML25_KERNELS",
    "ICML25_CPU_VNNI",
    "ICML25_CPU_AMX",
    "ICML25_CPU_TUNING",
    "ICML25_CUDA_GEMV",
    "ICML25_CUDA_TC",
    "ICML25_CUDA_SK_ROWS",
    "ICML25_CUDA_SK_R",
    "ICML25_KMAJOR_ROWS_INT4",
    "ICML25_KMAJOR_ROWS_SPARSE24",
}
# ICML25_* variables that change no number: where files are cached, what the workflow passes itself, where a
# cluster queues the jobs, what the test suite requires of the machine
ENV_WITHOUT_EFFECT = {
    CONFIG_DIGESTS_ENV,
    "ICML25_DAG_ONLY",
    "ICML25_DOWNLOAD_CACHE",
    "ICML25_CACHE_DIR",
    "ICML25_SLURM_ACCOUNT",
    "ICML25_SLURM_PARTITION",
    "ICML25_SLURM_GPU_PARTITION",
    "ICML25_REQUIRE_BROWSER",
    "ICML25_REQUIRE_SLURM",
}


def result_environment() -> dict[str, str]:
    """The environment that can change a result or a timing: every ICML25_* variable set (ENV_WITH_EFFECT, and
    any other not known to have no effect, ENV_WITHOUT_EFFECT), and,
    where this process imported methods.kernels, whether its ops ran compiled or as the PyTorch reference
    (`kernels`): a timing measured on the reference ops says nothing about the paper's kernels."""
    env = {k: v for k, v in sorted(os.environ.items()) if k.startswith("ICML25_") and k not in ENV_WITHOUT_EFFECT}
    kernels = sys.modules.get("methods.kernels")
    if kernels is not None:
        env["kernels"] = "compiled" if kernels.extension_available() else "reference"
    return env


def provenance(paper: str, scale: str, libraries: Iterable[str] = ()) -> dict:
    """Commit (and dirtiness), package versions, scale, config digest, host and the environment that changes
    results (result_environment) of this process; `write_claims` adds the records of the paper's jobs
    (`with_job_records`)."""
    digests = json.loads(os.environ.get(CONFIG_DIGESTS_ENV, "{}"))
    out = {
        **git_state(),
        "packages": package_versions([*CORE_PACKAGES, *libraries]),
        "environment_digest": environment_digest(),
        "scale": scale,
        "config_digest": digests.get(paper),
        "host": host(),
        "environment": result_environment(),
    }
    return out


# ---------------------------------------------------------------------------------------------------------
# Job records. On a cluster the claims job runs on a CPU node while the jobs that trained, evaluated and timed
# ran elsewhere (a GPU node, another CPU model): each such job records its own machine and environment beside
# its log ({outdir}/logs/<slug>/<job>.log -> <job>.provenance.json), and the claims job gathers the records of
# its paper and of the shared steps it reads (SHARED_SECTIONS) into claims.json's provenance.jobs.
# `methods.common.device.job_device` records every job that computes on a device; a script may call
# `record_job()` itself.

JOB_RECORD_SUFFIX = ".provenance.json"
_RECORDING: set[str] = set()


def running_job():
    """The Snakemake job this process runs, as the `snakemake` object Snakemake gives a `script:` (rule, wildcards,
    log, ...); None outside a Snakemake script job."""
    job = getattr(sys.modules.get("__main__"), "snakemake", None)
    return job if job is not None and getattr(job, "log", None) else None


def job_record_path(log_file: str | Path) -> Path:
    """Where the job whose log is `log_file` records its provenance: beside the log."""
    log_file = Path(log_file)
    return log_file.with_name(log_file.name.removesuffix(".log") + JOB_RECORD_SUFFIX)


def job_record(rule: str | None = None) -> dict:
    """This process's machine (host: CPU, GPU, ...) and the environment that changes its numbers."""
    return {"rule": rule, "host": host(), "environment": result_environment()}


def write_job_record(log_file: str | Path, rule: str | None = None) -> Path:
    from .io import write_json

    path = job_record_path(log_file)
    write_json(path, job_record(rule))
    return path


def record_job() -> Path | None:
    """Record the running Snakemake job's provenance when this process exits (so that it names the GPU once torch
    has seen it, and whether the kernels it used ran compiled); once per job, nothing outside Snakemake."""
    import atexit

    job = running_job()
    if job is None:
        return None
    log_file = str(job.log[0])
    path = job_record_path(log_file)
    if log_file not in _RECORDING:
        _RECORDING.add(log_file)
        atexit.register(write_job_record, log_file, getattr(job, "rule", None))
    return path


def job_records(claims_path: str | Path, paper: str) -> list[dict]:
    """The job records of a paper and of the shared steps it reads, found beside the logs of the run whose
    claims.json is `claims_path` ({outdir}/<paper>/claims.json), each with its `job` ("<slug>/<log name>");
    sorted by job. A record that cannot be read is named in the claims job's log and left out."""
    from .io import log, read_json

    logs = Path(claims_path).resolve().parent.parent / "logs"
    out = []
    for slug in (paper, *SHARED_SECTIONS.get(paper, ())):
        for path in sorted((logs / slug).glob("*" + JOB_RECORD_SUFFIX)):
            try:
                record = read_json(path)
            except (OSError, ValueError) as e:
                log(f"job record {path} is unreadable ({e}); left out of the provenance")
                continue
            if not (isinstance(record, dict) and set(record) == {"rule", "host", "environment"}):
                log(f"job record {path} is not a record of methods.common.provenance.job_record; left out")
                continue
            out.append({"job": f"{slug}/{path.name.removesuffix(JOB_RECORD_SUFFIX)}", **record})
    return out


def merged_environment(own: Mapping[str, str], jobs: Iterable[Mapping]) -> dict[str, str]:
    """The environment of a whole run: every override set in any job, and `kernels: reference` where any job ran
    the PyTorch reference (else `compiled` where any job ran the compiled ops)."""
    envs = [dict(own), *(dict(j.get("environment") or {}) for j in jobs)]
    out: dict[str, str] = {}
    for env in envs:
        for k, v in env.items():
            if k != "kernels":
                out.setdefault(k, v)
    kinds = {env["kernels"] for env in envs if "kernels" in env}
    if kinds:
        out["kernels"] = "reference" if "reference" in kinds else "compiled"
    return dict(sorted(out.items()))


def with_job_records(doc: Mapping, claims_path: str | Path) -> dict:
    """A claims document whose provenance carries the records of the paper's jobs (`jobs`) and the environment
    of the whole run (`merged_environment`): a full-scale claims.json names the GPU nodes that computed it, not
    only the claims job's CPU node."""
    prov = dict(doc["provenance"])
    jobs = job_records(claims_path, doc["paper"])
    prov["jobs"] = jobs
    prov["environment"] = merged_environment(prov.get("environment") or {}, jobs)
    return {**doc, "provenance": prov}


def huggingface_token() -> str | None:
    """The Hugging Face token this machine would use (HF_TOKEN, HUGGING_FACE_HUB_TOKEN, or the token file of
    `huggingface-cli login`), without importing the hub client; None when there is none."""
    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        if os.environ.get(var):
            return os.environ[var]
    home = Path(
        os.environ.get("HF_HOME", Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "huggingface")
    )
    token_file = Path(os.environ.get("HF_TOKEN_PATH", home / "token"))
    try:
        token = token_file.read_text().strip()
    except OSError:
        return None
    return token or None
