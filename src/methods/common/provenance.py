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


# ICML25_* variables that change no number: where files are cached, what the workflow passes itself
ENV_WITHOUT_EFFECT = {CONFIG_DIGESTS_ENV, "ICML25_DAG_ONLY", "ICML25_DOWNLOAD_CACHE", "ICML25_CACHE_DIR"}


def result_environment() -> dict[str, str]:
    """The environment that can change a result or a timing: every ICML25_* variable set (ICML25_KERNELS,
    ICML25_CPU_VNNI, ICML25_CPU_AMX, ICML25_CPU_TUNING, the CUDA switches, ...) except the cache locations, and,
    where this process imported methods.kernels, whether its ops ran compiled or as the PyTorch reference
    (`kernels`): a timing measured on the reference ops says nothing about the paper's kernels."""
    env = {k: v for k, v in sorted(os.environ.items()) if k.startswith("ICML25_") and k not in ENV_WITHOUT_EFFECT}
    kernels = sys.modules.get("methods.kernels")
    if kernels is not None:
        env["kernels"] = "compiled" if kernels.extension_available() else "reference"
    return env


def _schema_records_environment() -> bool:
    """Whether the claims schema has provenance.environment (workflow/schemas/claims.schema.json: it forbids
    unknown keys, so the environment is recorded from the schema version that declares it)."""
    try:
        schema = json.loads((REPO_ROOT / "workflow" / "schemas" / "claims.schema.json").read_text())
        return "environment" in schema["properties"]["provenance"]["properties"]
    except (OSError, ValueError, KeyError):
        return False


def provenance(paper: str, scale: str, libraries: Iterable[str] = ()) -> dict:
    """Commit (and dirtiness), package versions, scale, config digest and host of this run (and the environment
    that changes results, result_environment, where the claims schema records it)."""
    digests = json.loads(os.environ.get(CONFIG_DIGESTS_ENV, "{}"))
    out = {
        **git_state(),
        "packages": package_versions([*CORE_PACKAGES, *libraries]),
        "environment_digest": environment_digest(),
        "scale": scale,
        "config_digest": digests.get(paper),
        "host": host(),
    }
    if _schema_records_environment():
        out["environment"] = result_environment()
    return out


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
