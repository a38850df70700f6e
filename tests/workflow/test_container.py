"""The paper-scale software: requirements/full.lock, containers/Dockerfile and containers/icml25-repro.def.

What these tests prove, and what they do not:
- offline: the lock pins every dependency of pyproject.toml (and its `full` extra) at a version inside its
  range, each with a sha256, torch at requirements/cpu.txt's version (the CUDA build of the same release);
  the Dockerfile and the Apptainer definition parse, use the lock with hash checking, and agree with each
  other and with the lock (CUDA major version, Python version, image tag); the workflow's global
  `container:` is the configured image.
- online (PyPI): in a fresh virtual environment of this interpreter (Python 3.11 on Linux x86_64, the
  image's), uv resolves the lock alone, hash mode on: every pin exists on PyPI for this platform, the set is
  closed under dependencies (no unpinned one is needed) and consistent (exactly the lock's packages). It is
  a dry run: nothing is downloaded beyond index pages and metadata (about 50 MB, not the 3 GB of CUDA
  wheels), so it does not prove that the archives match their hashes (checked by the real install), that
  they import, or that CUDA works; the image itself is not built here (no Docker daemon or registry).
"""

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements" / "full.lock"
DOCKERFILE = ROOT / "containers" / "Dockerfile"
APPTAINER = ROOT / "containers" / "icml25-repro.def"
INSTRUCTIONS = {
    "FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME", "USER",
    "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL",
}  # fmt: skip


def lock_pins() -> dict[str, tuple[str, list[str]]]:
    """{canonical name: (version, [sha256, ...])} of requirements/full.lock."""
    pins, current = {}, None
    for line in LOCK.read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s\\]+)", line)
        if m:
            current = canonicalize_name(m.group(1))
            pins[current] = (m.group(2), [])
        for h in re.findall(r"--hash=sha256:([0-9a-f]{64})", line):
            pins[current][1].append(h)
    return pins


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined; comments and blank lines dropped."""
    out, buf = [], ""
    for line in DOCKERFILE.read_text().splitlines():
        if not buf and (not line.strip() or line.lstrip().startswith("#")):
            continue
        buf += line.rstrip()
        if buf.endswith("\\"):
            buf = buf[:-1] + " "
            continue
        word, _, rest = buf.strip().partition(" ")
        out.append((word.upper(), rest.strip()))
        buf = ""
    assert not buf, "the Dockerfile ends inside a continued line"
    return out


def test_lock_pins_every_dependency_in_its_range_with_hashes():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = lock_pins()
    assert len(pins) > 100
    for spec in project["dependencies"] + project["optional-dependencies"]["full"]:
        req = Requirement(spec)
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} (pyproject.toml) is not in requirements/full.lock: run `make lock`"
        version = pins[name][0]
        assert req.specifier.contains(version, prereleases=True), (
            f"{req.name}=={version} in the lock is outside pyproject.toml's {req.specifier}: run `make lock`"
        )
    unhashed = [n for n, (_, hashes) in pins.items() if not hashes]
    assert not unhashed, f"pins without a sha256: {unhashed}"


def test_lock_holds_the_cuda_build_of_the_tested_torch():
    cpu_pin = re.search(r"^torch==(\S+)", (ROOT / "requirements" / "cpu.txt").read_text(), re.M).group(1)
    pins = lock_pins()
    assert pins["torch"][0] == cpu_pin, "full.lock and cpu.txt must pin the same torch release"
    assert "nvidia-cuda-runtime" in pins or any(n.startswith("nvidia-cuda-runtime") for n in pins), (
        "the lock has no CUDA runtime: torch resolved to a CPU build"
    )


def _cuda_major_of_lock() -> int:
    pins = lock_pins()
    name = next(n for n in pins if n.startswith("nvidia-cuda-runtime"))
    return int(pins[name][0].split(".")[0])


def test_dockerfile_parses_and_installs_the_lock_with_hashes():
    instructions = dockerfile_instructions()
    unknown = [w for w, _ in instructions if w not in INSTRUCTIONS]
    assert not unknown, f"not Dockerfile instructions: {unknown}"
    assert instructions[0][0] == "FROM", "a Dockerfile starts with FROM (no ARG is used before it)"
    base = instructions[0][1]
    m = re.fullmatch(r"nvidia/cuda:(\d+)\.(\d+)\.(\d+)-devel-ubuntu\d+\.\d+", base)
    assert m, f"base image {base}: a pinned nvidia/cuda devel tag (nvcc for the kernels)"
    assert int(m.group(1)) == _cuda_major_of_lock(), "the toolkit's CUDA major version differs from torch's"
    for word, args in instructions:
        if word == "COPY":
            *sources, _ = args.split()
            for src in sources:
                assert (ROOT / src).exists(), f"COPY {src}: no such file in the build context (the repo root)"
    runs = " ".join(args for word, args in instructions if word == "RUN")
    assert re.search(r"uv pip sync .*--require-hashes \S*full\.lock", runs), "the lock is not installed with hashes"
    python = re.search(r"uv python install (\d+\.\d+\.\d+)", runs).group(1)
    assert python.rsplit(".", 1)[0] == "3.11", "the lock is compiled for Python 3.11 (Makefile: lock)"
    assert f"--python-version {python.rsplit('.', 1)[0]}" in (ROOT / "Makefile").read_text()
    assert re.search(r"pip install --no-cache-dir uv==\d", runs), "uv must be pinned"


def test_apptainer_definition_is_built_from_the_dockerfiles_image():
    text = APPTAINER.read_text()
    header = dict(re.findall(r"^(Bootstrap|From):\s*(\S+)", text, re.M))
    assert header.get("Bootstrap") == "docker-daemon", header
    tag = re.search(r"docker build -f containers/Dockerfile -t (\S+) \.", DOCKERFILE.read_text()).group(1)
    assert header.get("From") == tag, f"the definition bootstraps {header.get('From')}, the Dockerfile builds {tag}"
    sections = re.findall(r"^%(\w+)", text, re.M)
    known = {"labels", "environment", "test", "help", "post", "files", "runscript", "setup", "startscript"}
    assert sections and set(sections) <= known, sections
    assert "/opt/venv/bin" in text.split("%environment", 1)[1].split("%", 1)[0]


def test_every_job_runs_in_the_configured_image(run_snakemake):
    """The global container directive holds the config's image: --software-deployment-method apptainer gives
    it to every rule (a rule-level `container:` would override it, so none may have one)."""
    snakefile = (ROOT / "Snakefile").read_text()
    assert re.search(r'^container: config\["container"\]$', snakefile, re.M)
    rule_files = [*ROOT.glob("workflow/rules/*.smk"), *ROOT.glob("workflow/rules/*/*.smk")]
    overriding = [p.name for p in rule_files if re.search(r"^\s+container:", p.read_text(), re.M)]
    assert not overriding, f"rules with their own container: {overriding}"
    proc = run_snakemake("--lint", check=False)
    assert "Specify a conda environment or container for each rule" not in proc.stdout + proc.stderr


def _pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
        return True
    except OSError:
        return False


@pytest.mark.workflow
def test_lock_resolves_alone_into_a_fresh_venv(tmp_path):
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    if not Path(uv).exists():
        pytest.skip("uv is not installed (pip install -e '.[test]' installs it)")
    if not _pypi_reachable():
        pytest.skip("pypi.org is not reachable from here")
    venv = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    proc = subprocess.run(
        [uv, "pip", "install", "--python", str(venv / "bin" / "python"), "--dry-run", "--strict"]
        + ["--require-hashes", "--index-url", "https://pypi.org/simple", "-r", str(LOCK)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "UV_CACHE_DIR": str(tmp_path / "cache")},  # a cold cache; the host's certificates
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    n = len(lock_pins())
    assert re.search(rf"Resolved {n} packages", out), out[:2000]
    assert re.search(rf"Would install {n} packages", out), out[:2000]
    would = {canonicalize_name(m) for m in re.findall(r"^ \+ ([A-Za-z0-9_.\-]+)==", out, re.M)}
    assert would == set(lock_pins()), sorted(would ^ set(lock_pins()))
