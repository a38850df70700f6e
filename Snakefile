# icml25-repro: one workflow reproducing ICML 2025 papers (README.md).
# `snakemake --cores all` runs every paper at the tiny scale; `snakemake --cores all <slug>` one paper.
#
# `snakemake --lint` asks for a conda environment or container per rule. We deliberately use one
# Python environment for the whole workflow (pyproject.toml, installed by `make`), because every
# rule imports the same `methods` library and torch; per-rule environments would install torch
# a dozen times. That is the only lint we accept. At paper scale the same environment, locked
# (requirements/full.lock), is also an image (containers/) that every job runs in with
# `--software-deployment-method apptainer`: the global `container:` below.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


container: config["container"]


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"


# A job killed with SIGKILL (out of memory, a scheduler's timeout) leaves its atomic writer's temporary
# `.<name>.*.part` file behind; the next run removes them before any job starts (never in a dry run).
onstart:
    from methods.common.io import remove_orphaned_parts

    check_gpu_limit()
    remove_orphaned_parts([OUTDIR, RESOURCES])


wildcard_constraints:
    seed=r"\d+",
    seeds=r"all|seed\d+",
    K=r"\d+",


# Shared substrates (artifacts that several papers consume, e.g. the trained small language model)
# live in workflow/rules/shared/; they are not papers, and their rules run only when a paper needs them.
for _shared in SHARED_RULE_FILES:

    include: _shared


# One rule file per paper, found on disk (common.smk derives PAPERS from workflow/rules/).
for _slug in PAPERS:

    include: f"workflow/rules/{_slug}.smk"


include: "workflow/rules/report.smk"


# On a cluster, GPU jobs go to the GPU partition and every runtime stays within its partition's limit.
assign_partitions(workflow.rules)


rule all:
    default_target: True
    input:
        all_targets(),
