# Everything that is not a rule: config validation, the paper registry, wildcard constraints,
# helpers shared by the paper rule files. Rule files hold rules only.
import os
import sys
from pathlib import Path

from methods.common.config import validate_config
from methods.common.provenance import CONFIG_DIGESTS_ENV, config_digests

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


# The longest job a cluster partition is assumed to allow (profiles/slurm-full states it); a step that
# needs longer checkpoints and resumes, so a job killed at the limit continues in its resubmission.
PARTITION_MAX_MINUTES = 2880


def per_attempt(tiny, full=None, cap=None):
    """mem_mb or runtime: the scale's value (`full` at paper scale, else `tiny`) times the attempt number,
    so a job killed for memory or time is resubmitted (`retries` in the SLURM profiles) with more;
    `cap` bounds it (runtime: PARTITION_MAX_MINUTES)."""
    base = full if (full is not None and SCALE == "full") else tiny

    def value(wildcards, attempt):
        return min(base * attempt, cap) if cap else base * attempt

    value.base = base
    return value


def runtime_per_attempt(tiny, full=None):
    """runtime (minutes) per_attempt, capped at the partition limit."""
    return per_attempt(tiny, full, cap=PARTITION_MAX_MINUTES)


# Set by tools that only read the DAG's shape (dvc.yaml generation, the consistency tests): prerequisites
# are then not required to exist.
DAG_ONLY_ENV = "ICML25_DAG_ONLY"


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
                f"read token (huggingface.co/settings/tokens) and set HF_TOKEN, or run `huggingface-cli login` "
                f"on the submit host and on the nodes (a shared home directory carries the token)."
            )
        return []

    return check


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
