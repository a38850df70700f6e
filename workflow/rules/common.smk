# Everything that is not a rule: config validation, the paper registry, wildcard constraints,
# helpers shared by the paper rule files. Rule files hold rules only.
import os
import sys
from pathlib import Path

from methods.common.config import validate_config
from methods.common.provenance import (
    CONFIG_DIGESTS_ENV,
    config_digests,
    unrecorded_results_of_another_config,
)

# Strict JSON-schema types: an integer key rejects 1.0, a number key rejects NaN and inf.
validate_config(
    config, Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml"
)


def _check_workflow_profile(argv):
    """Snakemake silently ignores a --workflow-profile that does not exist (no profile at all is used,
    not even profiles/default); a misspelled profile would then run with the wrong executor or settings.
    """
    for i, arg in enumerate(argv):
        value = None
        if arg == "--workflow-profile" and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith("--workflow-profile="):
            value = arg.split("=", 1)[1]
        if value and value != "none":
            candidates = [Path(value), Path("profiles") / value]
            candidates.append(Path(workflow.basedir) / "profiles" / value)
            if not any(c.exists() for c in candidates):
                known = sorted(
                    p.name
                    for p in (Path(workflow.basedir) / "profiles").iterdir()
                    if p.is_dir()
                )
                raise ValueError(
                    f"--workflow-profile {value}: no such profile (Snakemake would silently use none); "
                    f"profiles here: {', '.join(f'profiles/{k}' for k in known)}"
                )


_check_workflow_profile(sys.argv)

OUTDIR = config["outdir"]
RESOURCES = config["resources"]
SCALE = config["scale"]
# A scale is a set of values, not a label: it must come from an overlay file (config/smoke.yaml,
# config/full.yaml or your own), never from `--config scale=...` on top of the tiny values.
if SCALE != "tiny":
    import yaml

    _scale_files = [
        f
        for f in workflow.configfiles
        if (yaml.safe_load(Path(f).read_text()) or {}).get("scale") == SCALE
    ]
    if not _scale_files:
        raise ValueError(
            f"config key 'scale': {SCALE!r} was set without its overlay, so tiny-scale settings would be "
            f"labelled {SCALE!r}; run with `--configfile config/{SCALE}.yaml` instead of `--config scale={SCALE}`."
        )
    if (
        Path(OUTDIR)
        .resolve()
        .is_relative_to((Path(workflow.basedir) / "results").resolve())
    ):
        raise ValueError(
            f"config key 'outdir': scale {SCALE!r} would write into results/, the tiny scale's outputs; "
            f"set outdir in {_scale_files[-1]} (config/{SCALE}.yaml uses results_{SCALE})."
        )
NON_PAPER_RULE_FILES = {"common", "report"}


# The registry of papers is the set of rule files; a paper is added by adding its file.
ALL_PAPERS = sorted(
    p.stem
    for p in (Path(workflow.basedir) / "workflow" / "rules").glob("*.smk")
    if p.stem not in NON_PAPER_RULE_FILES
)
for _slug in ALL_PAPERS:
    if _slug not in config:
        raise ValueError(
            f"workflow/rules/{_slug}.smk exists but config.yaml has no section '{_slug}'; "
            f"add it (and workflow/schemas/{_slug}.schema.yaml)."
        )
_unknown = [p for p in config["papers"] if p not in ALL_PAPERS]
if _unknown:
    raise ValueError(
        f"config key 'papers': unknown paper(s) {_unknown}; available: {ALL_PAPERS}"
    )
PAPERS = config["papers"] or ALL_PAPERS
# Every job's claims.json records the digest of its paper's config section (its provenance).
os.environ[CONFIG_DIGESTS_ENV] = config_digests(config, ALL_PAPERS)
# Shared substrates: one rule file each in workflow/rules/shared/ (helpers in workflow/rules/helpers/).
SHARED_RULE_FILES = sorted(
    f"workflow/rules/shared/{p.name}"
    for p in (Path(workflow.basedir) / "workflow" / "rules" / "shared").glob("*.smk")
)


def _pinned_files(node, found):
    """{filename: sha256} of every pinned download declared anywhere in the config."""
    if isinstance(node, dict):
        if isinstance(node.get("filename"), str) and isinstance(
            node.get("sha256"), str
        ):
            found[node["filename"]] = node["sha256"]
        for value in node.values():
            _pinned_files(value, found)
    elif isinstance(node, list):
        for value in node:
            _pinned_files(value, found)
    return found


PINNED = _pinned_files(config, {})


def input_pins(wc, input):
    """A params value: {input path: pinned sha256} for the rule's inputs that are pinned downloads.
    Scripts check them before reading (methods.common.data.verify_pins), so a truncated or replaced
    download is named with its fix instead of failing deep inside a zip or pickle reader.
    """
    return {
        str(f): PINNED[Path(f).name]
        for f in input
        if Path(f).name in PINNED and Path(f).is_relative_to(RESOURCES)
    }


def paper_dir(slug):
    """Output folder of one paper at the current scale."""
    return f"{OUTDIR}/{slug}"


def claims_path(slug):
    return f"{paper_dir(slug)}/claims.json"


def log_path(slug, name):
    return f"{OUTDIR}/logs/{slug}/{name}.log"


def benchmark_path(slug, name):
    return f"{OUTDIR}/benchmarks/{slug}/{name}.tsv"


def _folder_of(files, key):
    f = getattr(files, key)
    return str(Path(f if isinstance(f, str) else f[0]).parent)


def input_dir(key):
    """A params value: the folder of the rule's input `key` (its first file if a list). Folders that
    scripts need are derived from the files, not hard-coded (snakemake --lint: params as paths).
    """
    return lambda wc, input: _folder_of(input, key)


def output_dir(key):
    """A params value: the folder of the rule's output `key` (see input_dir)."""
    return lambda wc, output: _folder_of(output, key)


def at_scale(tiny, full):
    """A value that differs at paper scale: `full` on the paper-scale run (SLURM, GPU), `tiny` otherwise
    (tiny, smoke). For threads and gpu; mem_mb and runtime use per_attempt."""
    return full if SCALE == "full" else tiny


def seed_groups(seeds):
    """The `{seeds}` wildcard values of a step that runs every seed: one group of all seeds at tiny and
    smoke scale (one job, one Python start-up), one group per seed at paper scale (`seed3`), so that on a
    cluster a failed or killed job costs one seed and the seeds run in parallel."""
    return [f"seed{s}" for s in seeds] if SCALE == "full" else ["all"]


def group_seeds(group, seeds):
    """The seeds of one `{seeds}` wildcard value (see seed_groups)."""
    if group == "all":
        return list(seeds)
    seed = int(group.removeprefix("seed"))
    if seed not in seeds:
        raise ValueError(
            f"seed group {group!r}: seed {seed} is not among the configured seeds {list(seeds)}"
        )
    return [seed]


# Rules with `localrule: True` (downloads: compute nodes often have no internet) run on the submit host, a
# login node where sites cap a user's memory at a few GB and a retry gets no more: their mem_mb is
# per_attempt(..., cap=SUBMIT_HOST_MB) and their work streams to disk (Hugging Face and OpenML caches, the
# ogb loaders' pre-processing) instead of holding a data set in memory; parsing beyond that belongs in the
# compute job that reads the download. tests/workflow/test_cluster_submissions.py checks every local job.
SUBMIT_HOST_MB = 4000

# Scheduling only (no output changes). The longest chains start first: the compiled kernels (every
# LLM-compression job reads them), the shared LM trained here with the short steps before it (downloads,
# corpus, tokenizer, tokens: without them a run had started its training at 50 min, behind everything of
# equal priority, and ended with one core idle), and nestquant's causal-LM jobs (about 7 min each on one
# core). The many short jobs then fill the cores around them. Each of these asks for one thread
# at tiny scale: a 2-thread job starts only when both cores are free, and a 2-core run of every paper had
# started the kernels at 32 min and the shared LM at 54 min, then ended with one core idle behind them.
LONG_CHAIN_PRIORITY = 10


def per_attempt(tiny, full=None, cap=None):
    """mem_mb or runtime: the scale's value (`full` at paper scale, else `tiny`) times the attempt number,
    so a job killed for memory or time is resubmitted (`retries` in the SLURM profiles) with more;
    `cap` bounds it."""
    base = full if (full is not None and SCALE == "full") else tiny
    if cap is not None and base > cap:
        raise ValueError(
            f"per_attempt({tiny}, {full}, cap={cap}): the {SCALE}-scale value {base} exceeds its cap; "
            "lower the value or move the work into a job submitted to a compute node"
        )

    def value(wildcards, attempt):
        return min(base * attempt, cap) if cap else base * attempt

    value.base = base
    return value


def runtime_per_attempt(tiny, full=None):
    """runtime (minutes) per_attempt, capped at the time limit of the partition the job is submitted to
    (the SLURM profile's slurm_max_runtime / slurm_gpu_max_runtime; see assign_partitions). A step that
    can outlast it checkpoints and resumes, so a job killed at the limit continues in its resubmission.
    """
    value = per_attempt(tiny, full)
    value.partition_capped = True
    return value


def in_container():
    """Whether jobs run in the image (config key `container`, --software-deployment-method apptainer)."""
    from snakemake_interface_executor_plugins.settings import DeploymentMethod

    methods = workflow.deployment_settings.deployment_method or ()
    return DeploymentMethod.APPTAINER in methods


def job_python():
    """The interpreter of a shell rule: the image's `python` in the container, else this Snakemake's."""
    return "python" if in_container() else sys.executable


# The image holds the environment, not the code: jobs import `methods` from this checkout (the container
# sees the working directory; its environment passes through).
if in_container():
    _src = str(Path(workflow.basedir) / "src")
    os.environ.update(
        PYTHONPATH=os.pathsep.join(
            [_src]
            + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        )
    )


# ---- Cluster submission: what the SLURM profiles (profiles/slurm*/config.yaml) leave to the workflow ----


def _profile_defaults():
    """{name: raw value} of the default resources (the profile's default-resources, --default-resources)."""
    defaults = workflow.resource_settings.default_resources
    return {name: res.raw for name, res in defaults.items()} if defaults else {}


def _expanded(raw):
    """A default resource as Snakemake evaluates it: environment variables expanded."""
    return os.path.expandvars(raw) if isinstance(raw, str) else raw


def check_slurm_variables(defaults):
    """A `$VARIABLE` in a slurm_* default resource that is not exported reaches sbatch literally (or, for the
    account, is mistaken for a name) and fails at the first submission, after the DAG was built and the
    downloads ran; stop here, in the dry run already, naming the variable. An empty account is allowed
    (clusters without accounts); an empty partition is not (give the same one for CPU and GPU jobs).
    """
    import re

    problems = []
    for name, raw in sorted(defaults.items()):
        if not (name.startswith("slurm_") and isinstance(raw, str)):
            continue
        unset = re.findall(r"\$\{?(\w+)", _expanded(raw))
        if unset:
            problems.append(
                f"default resource {name} comes from ${unset[0]}, which is not set: export {unset[0]}=<value>"
            )
        elif "partition" in name and not _expanded(raw).strip():
            problems.append(
                f"default resource {name} ({raw}) is empty: set it to a partition (`sinfo -s`)"
            )
    if problems:
        raise ValueError(
            "SLURM profile settings missing, nothing was submitted:\n  "
            + "\n  ".join(problems)
            + '\n(README "Full scale and SLURM"; ICML25_SLURM_ACCOUNT may be set empty where the cluster has no accounts)'
        )


def _int_resource(r, name):
    res = r.resources.get(name)
    value = getattr(res, "raw", None) if res is not None else None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    return value if isinstance(value, int) else 0


def assign_partitions(rules):
    """Route each job to its partition and cap its runtime at that partition's limit, from the default
    resources of the SLURM profile: a job that asks for a GPU goes to slurm_gpu_partition (limit
    slurm_gpu_max_runtime), the others stay on slurm_partition (limit slurm_max_runtime). Many sites reject
    a job on a GPU partition that asks for no GPU, and a runtime above the limit at the first sbatch. A
    rule's own --set-resources slurm_partition wins. Without these resources (local runs) nothing changes.
    """
    from snakemake.resources import Resource

    defaults = _profile_defaults()
    overrides = workflow.resource_settings.overwrite_resources or {}
    for r in rules:
        gpu = _int_resource(r, "gpu") > 0
        gpu_partition = defaults.get("slurm_gpu_partition")
        if gpu and gpu_partition and "slurm_partition" not in overrides.get(r.name, {}):
            r.resources["slurm_partition"] = Resource.from_cli_expression(
                "slurm_partition", gpu_partition
            )
        limit = _expanded(
            defaults.get("slurm_gpu_max_runtime" if gpu else "slurm_max_runtime")
        )
        runtime = r.resources.get("runtime")
        evaluator = getattr(runtime, "_evaluator", None)
        if limit and getattr(evaluator, "partition_capped", False):
            r.resources["runtime"] = per_attempt(evaluator.base, cap=int(limit))


if not workflow.remote_exec:
    check_slurm_variables(_profile_defaults())


# Set by tools that only read the DAG's shape (dvc.yaml generation, the consistency tests): prerequisites
# are then not required to exist.
DAG_ONLY_ENV = "ICML25_DAG_ONLY"

# Results of another config that Snakemake has no record of (a results folder copied in) would read current.
# Checked where the DAG is planned (not in a cluster job re-reading the workflow, nor for the DAG's shape).
if not os.environ.get(DAG_ONLY_ENV) and not workflow.remote_exec:
    _foreign = unrecorded_results_of_another_config(OUTDIR, config, PAPERS)
    if _foreign:
        raise ValueError("\n".join(_foreign))


def prerequisite(path, what, how):
    """An input function for a file that no rule makes (licence-gated data, a released checkpoint); when it
    is missing the DAG fails, in the dry run already, naming the file, what it is and how to obtain it.
    """

    def existing(wildcards):
        if os.environ.get(DAG_ONLY_ENV):
            return []
        if not Path(path).exists():
            raise FileNotFoundError(f"{what} is missing: expected at {path}. {how}")
        return path

    return existing


def hf_token_for(model):
    """An input function (no file) for a gated Hugging Face model: fails the DAG, in the dry run already,
    when no token is configured, saying how to get access and set one."""

    def check(wildcards):
        from methods.common.provenance import huggingface_token

        if not huggingface_token() and not os.environ.get(DAG_ONLY_ENV):
            raise PermissionError(
                f"{model} is gated on the Hugging Face Hub: accept its licence on its model page, create a "
                f"read token (huggingface.co/settings/tokens) and set HF_TOKEN, or run `hf auth login` "
                f"on the submit host (the token is stored under HF_HOME, which the nodes must share)."
            )
        return []

    return check


def check_gpu_limit():
    """For `onstart` (a real run, not a dry run): at paper scale on one machine every job that asks for a
    GPU would start at once on it (Snakemake counts an undeclared resource as unlimited) and run out of
    GPU memory; require `--resources gpu=N`, N the GPUs to use at a time. A cluster schedules GPUs itself.
    """
    if SCALE != "full" or not workflow.local_exec or workflow.remote_exec:
        return
    if "gpu" not in workflow.global_resources:
        raise ValueError(
            "paper scale on this machine: pass --resources gpu=N (N = GPU jobs at a time, 1 per GPU) and a "
            "memory cap, e.g. `snakemake --cores all --configfile config/full.yaml --resources gpu=1 "
            "mem_mb=64000`, or jobs that ask for a GPU all start at once on it."
        )


def submits_to_cluster():
    """Whether this run hands its jobs to SLURM (a SLURM profile's default resources are set)."""
    return "slurm_partition" in _profile_defaults() and not workflow.remote_exec


def endpoint_reachable(url, key):
    """For an input function: a network service that jobs call (an LLM server) must be reachable from where
    they run, or hours of a job's retries fail. Checked on the submit host, in the dry run already: an
    address that is the node itself (127.0.0.1, localhost) when the jobs go to a cluster, and one that does
    not accept a connection here, stop the DAG naming the config `key` and the fix."""
    import socket
    from urllib.parse import urlsplit

    if os.environ.get(DAG_ONLY_ENV):
        return
    parts = urlsplit(url)
    host, port = (
        parts.hostname,
        parts.port or (443 if parts.scheme == "https" else 80),
    )
    loopback = host in ("localhost", "::1") or (host or "").startswith("127.")
    if loopback and submits_to_cluster():
        raise ConnectionError(
            f"config {key}: {url} is the compute node itself once the job runs on the cluster, where no server "
            f"listens. Set {key} to an address the nodes reach (e.g. http://<submit host>:{port}/v1, or a hosted API)."
        )
    try:
        socket.create_connection((host, port), timeout=5).close()
    except OSError as err:
        raise ConnectionError(
            f"config {key}: nothing answers at {url} from this host ({err}); start the server or set {key} "
            f"to one that runs, before submitting jobs that call it for hours."
        ) from err


def all_targets():
    """Inputs of the default target: each selected paper's target inputs, then the combined report."""
    targets = []
    for slug in PAPERS:
        targets += list(getattr(rules, slug).input)
    return targets + [f"{OUTDIR}/REPORT.md"]


def script_code(script):
    """Input `code` of a `script:` rule: the src/methods files that workflow/scripts/<script> imports,
    transitively (methods.common.codedeps). Snakemake watches only the script itself; with these
    files as inputs, an edit to the method reruns exactly the jobs whose scripts import it.
    """
    from methods.common.codedeps import code_closure

    root = Path(workflow.basedir)
    return code_closure([root / "workflow" / "scripts" / script], src=root / "src")
