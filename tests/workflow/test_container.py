"""The paper-scale software: requirements/full.lock, containers/Dockerfile and containers/icml25-repro.def.

What these tests prove, and what they do not:
- offline: the lock pins every dependency of pyproject.toml (and its `full` extra) at a version inside its
  range, each with a sha256, torch at requirements/cpu.txt's version (the CUDA build of the same release);
  the Dockerfile and the Apptainer definition parse, use the lock with hash checking, and agree with each
  other and with the lock (CUDA major version, Python version, image tag); the workflow's global
  `container:` is the configured image.
- online (PyPI): in a fresh virtual environment of this interpreter (Python 3.11 on Linux x86_64, the
  image's), uv resolves the lock alone, hash mode on: every pin exists on PyPI for this platform, the set is
  closed under dependencies (no unpinned one is needed) and consistent (exactly the lock's packages). That
  is a dry run (index pages and metadata only). A second test really installs the lock into a fresh virtual
  environment with hashes checked, runs `pip check` and imports every top-level module of every installed
  package; it substitutes the CPU build of the same torch release for the CUDA build and its CUDA runtime
  wheels (its docstring says exactly which and why). Neither test proves that CUDA works, and the image
  itself is not built here (no Docker daemon or registry).
"""

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import textwrap
import zipfile
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


def lock_requirers() -> dict[str, set[str]]:
    """{canonical name: the lock's packages that require it} from the lock's `# via` notes; the project itself
    (pyproject.toml, the cpu.txt constraints) is named "<project>"."""
    requirers, current = {}, None
    for line in LOCK.read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.\-]+)==", line)
        if m:
            current = canonicalize_name(m.group(1))
            requirers[current] = set()
        elif current and line.strip().startswith("#"):
            entry = re.sub(r"^via\b", "", line.strip().lstrip("#").strip()).strip()
            if entry.startswith("-c ") or entry.endswith("(pyproject.toml)"):
                requirers[current].add("<project>")
            elif entry:
                requirers[current].add(canonicalize_name(entry))
    return requirers


def wheel_requirements(wheel: Path) -> set[str]:
    """The canonical names a wheel requires unconditionally on this platform (no extra asked for)."""
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA"))
        lines = z.read(meta).decode().splitlines()
    reqs = [Requirement(line.split(":", 1)[1]) for line in lines if line.startswith("Requires-Dist:")]
    return {canonicalize_name(r.name) for r in reqs if r.marker is None or r.marker.evaluate({"extra": ""})}


def cuda_runtime_of_lock(cpu_torch_requires: set[str]) -> set[str]:
    """The lock's packages that only torch's CUDA build needs: required through torch alone (directly or via
    another such package) and not needed by the CPU build of torch (nor by what that needs)."""
    requirers = lock_requirers()
    via_torch_only, grew = set(), True
    while grew:
        grew = False
        for name, by in requirers.items():
            if name != "torch" and name not in via_torch_only and by and by <= {"torch"} | via_torch_only:
                via_torch_only.add(name)
                grew = True
    needed_by_cpu, grew = set(cpu_torch_requires), True
    while grew:
        grew = False
        for name, by in requirers.items():
            if name not in needed_by_cpu and by & needed_by_cpu:
                needed_by_cpu.add(name)
                grew = True
    return via_torch_only - needed_by_cpu


# Run inside the fresh environment: every installed distribution, its top-level modules (the outermost
# packages and modules among its installed files; `a.b` where `a` is a namespace shared with other
# distributions) and the import of each; written as JSON to argv[1] (imports may print to stdout).
IMPORT_EVERY_MODULE = textwrap.dedent("""
    import importlib, importlib.metadata as md, json, sys

    def top_level_modules(dist):
        found = set()
        for f in dist.files or []:
            parts = f.parts
            if parts[0] == ".." or parts[0].endswith((".dist-info", ".data", ".libs")):
                continue
            if parts[-1] == "__init__.py":
                found.add(parts[:-1])
            elif parts[-1].endswith((".py", ".so")) and all(p.isidentifier() for p in parts[:-1]):
                stem = parts[-1].split(".")[0]
                if stem.isidentifier():
                    found.add(parts[:-1] + (stem,))
        outer = [m for m in found if m and not any(m[:i] in found for i in range(1, len(m)))]
        return sorted(".".join(m) for m in outer)

    report = {}
    for dist in list(md.distributions()):  # listed first: setuptools puts its vendored packages on sys.path
        modules, failed = top_level_modules(dist), {}
        for module in modules:
            try:
                importlib.import_module(module)
            except BaseException as e:
                failed[module] = f"{type(e).__name__}: {e}"[:500]
        report[dist.metadata["Name"]] = {"version": dist.version, "modules": modules, "failed": failed}
    with open(sys.argv[1], "w") as f:
        json.dump(report, f)
""")


# Modules a pinned package ships that are not importable in any environment of this project, each with the
# start of the error it raises and why that is expected. The test fails when one of them imports again.
NOT_IMPORTABLE = {
    # pybullet's legacy environments import the old `gym`; this project uses gymnasium and the maintained
    # port pybullet_envs_gymnasium (cfdg reads only the expert weights stored in this folder, as text)
    "pybullet: pybullet_envs": "ModuleNotFoundError: No module named 'gym'",
    # a renderer plugin loaded by pybullet.loadPlugin on a machine with EGL, not a Python module
    "pybullet: eglRenderer": "SystemError: initialization of eglRenderer failed",
}


def _cpu_torch_wheel(version: str, dest: Path) -> Path:
    """The CPU build of torch `version` as pip finds it for `make venv`: through pip's configuration (its
    index, find-links) or TORCH_INDEX, PyTorch's CPU index, when that is set."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--dest", str(dest)]
    if os.environ.get("TORCH_INDEX"):
        cmd += ["--extra-index-url", os.environ["TORCH_INDEX"]]
    proc = subprocess.run([*cmd, f"torch=={version}+cpu"], capture_output=True, text=True, timeout=600)
    wheels = sorted(dest.glob(f"torch-{version}+cpu-*.whl"))
    if proc.returncode != 0 or not wheels:
        pytest.fail(
            f"pip cannot find the CPU build torch=={version}+cpu that replaces the lock's CUDA build here: set "
            f"TORCH_INDEX=https://download.pytorch.org/whl/cpu (PyTorch's CPU index) or put the wheel in a "
            f"directory of pip's find-links.\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        )
    return wheels[0]


@pytest.mark.workflow
def test_lock_installs_into_a_fresh_venv_checks_and_imports(tmp_path):
    """requirements/full.lock really installed into a fresh virtual environment of this interpreter, the way
    containers/Dockerfile installs it (`uv pip sync --require-hashes`, every archive checked against the
    lock's sha256), then `pip check` and an import of every top-level module of every installed package.

    Substituted: torch's CUDA build and the CUDA runtime it pulls in — the lock's nvidia-* wheels, cuda-toolkit,
    cuda-bindings, cuda-pathfinder and triton, several GB needed by nothing else in the lock — are replaced by
    the CPU build of the same torch release (torch==<lock's version>+cpu, the build `make venv` installs, found
    through pip's configuration or TORCH_INDEX), because downloading and unpacking the CUDA wheels on every CI
    run would cost minutes and gigabytes to prove only what the dry-run test above already resolves. The CPU
    wheel is not in the lock, so its sha256 is taken from the file pip found rather than from the lock; every
    other archive is checked against the lock. The install reuses uv's download cache (a warm run takes
    seconds; a cold one downloads about 1.7 GB from PyPI)."""
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    if not Path(uv).exists():
        pytest.skip("uv is not installed (pip install -e '.[test]' installs it)")
    if not _pypi_reachable():
        pytest.skip("pypi.org is not reachable from here")
    pins = lock_pins()
    version = pins["torch"][0]
    wheel = _cpu_torch_wheel(version, tmp_path / "wheels")
    cpu_requires = wheel_requirements(wheel)
    assert not {n for n in cpu_requires if n.startswith(("nvidia-", "cuda-")) or n == "triton"}, (
        f"{wheel.name} requires CUDA packages: not a CPU build"
    )
    substituted = {"torch"} | cuda_runtime_of_lock(cpu_requires)
    cuda_named = {n for n in pins if n.startswith(("nvidia-", "cuda-")) or n == "triton"}
    assert substituted - {"torch"} == cuda_named, (
        f"the packages only torch's CUDA build needs ({sorted(substituted - {'torch'})}) are not exactly the lock's "
        f"nvidia-*, cuda-* and triton ({sorted(cuda_named)}): update this test's docstring and substitution"
    )
    blocks = re.split(r"\n(?=[A-Za-z0-9])", LOCK.read_text())
    kept = [
        b for b in blocks if (m := re.match(r"([A-Za-z0-9_.\-]+)==", b)) and canonicalize_name(m[1]) not in substituted
    ]
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("\n".join(kept) + f"\ntorch @ {wheel.as_uri()} --hash=sha256:{digest}\n")

    venv = tmp_path / "fresh"
    python = venv / "bin" / "python"
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        proc = subprocess.run(
            [uv, "pip", "sync", "--python", str(python), "--strict", "--require-hashes"]
            + ["--index-url", "https://pypi.org/simple", str(requirements)],
            capture_output=True,
            text=True,
            timeout=1200,
        )
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
        # pip's own check, with this environment's pip driving the fresh interpreter (which has no pip)
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "--python", str(python), "check"], capture_output=True, text=True
        )
        assert proc.returncode == 0, f"pip check in the fresh environment:\n{proc.stdout}{proc.stderr}"
        script, report_path = tmp_path / "import_every_module.py", tmp_path / "imports.json"
        script.write_text(IMPORT_EVERY_MODULE)
        proc = subprocess.run(
            [str(python), "-I", str(script), str(report_path)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr[-4000:]
        report = {canonicalize_name(n): r for n, r in json.loads(report_path.read_text()).items()}
    finally:
        shutil.rmtree(venv, ignore_errors=True)
        wheel.unlink(missing_ok=True)
    expected = {n: v for n, (v, _) in pins.items() if n not in substituted} | {"torch": f"{version}+cpu"}
    assert {n: r["version"] for n, r in report.items()} == expected
    without_modules = sorted(n for n, r in report.items() if not r["modules"])
    assert not without_modules, f"installed packages with no importable module found: {without_modules}"
    failed = {f"{n}: {m}": e for n, r in report.items() for m, e in r["failed"].items()}
    known = {k: e for k, e in failed.items() if k in NOT_IMPORTABLE and e.startswith(NOT_IMPORTABLE[k])}
    unexpected = {k: e for k, e in failed.items() if k not in known}
    assert not unexpected, f"imports failing in the fresh environment: {json.dumps(unexpected, indent=1)}"
    stale = sorted(set(NOT_IMPORTABLE) - set(known))
    assert not stale, f"listed in NOT_IMPORTABLE but no longer failing that way (remove them): {stale}"
