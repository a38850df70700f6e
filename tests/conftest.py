"""Run Snakemake on the real workflow from the repository root, as a user would; and how `make test` shares the
suite between its two pytest-xdist workers (pytest_xdist_make_scheduler)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def snakemake(*args, timeout=600, check=True, **kw):
    """`snakemake ARGS` in the repo root with this interpreter's environment; returns the CompletedProcess."""
    cmd = [sys.executable, "-m", "snakemake", *map(str, args)]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env, **kw)
    if check and proc.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


@pytest.fixture(scope="session")
def run_snakemake():
    return snakemake


@pytest.fixture(scope="session")
def repo_root():
    return ROOT


# Test modules that run Snakemake for real (not a dry run) in the repository root with the shared resources/
# folder run one after another on one xdist worker: concurrent runs there would plan the same downloads
# (Snakemake refuses a run writing the outputs of a running one), and the smoke test's momentary edit of a
# method file would be seen by the others' jobs. (Tests that copy the tree, or run Snakemake with their own
# resources= folder, or only dry runs, need no such care.) Being the longest unit, it is handed out first.
SERIAL_IN_REPO = {
    "tests/graphgpt/test_resume.py",
    "tests/workflow/test_single_gpu.py",
    "tests/workflow/test_cluster_submissions.py",
    "tests/workflow/test_smoke.py",
}
SERIAL_UNIT = "serial-in-repo"


def pytest_configure(config):
    missing = sorted(m for m in SERIAL_IN_REPO if not (ROOT / m).is_file())
    if missing:
        raise pytest.UsageError(f"tests/conftest.py: SERIAL_IN_REPO names no such test module: {missing}")


@pytest.hookimpl(optionalhook=True)  # a run without xdist (`-p no:xdist`) has no such hook to validate
def pytest_xdist_make_scheduler(config, log):
    """Under `-n N --dist loadfile` (make test): each test module is one unit of work, so its module-scoped
    fixtures (a trained model, a smoke run, a DVC repository) are built once, by one worker, as without xdist,
    and the modules of SERIAL_IN_REPO are together one unit, handed out first. (xdist's own `loadgroup` marks cannot do this
    under pytest 9: it renames the tests through an attribute pytest no longer reads.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            module = nodeid.split("::", 1)[0]
            return SERIAL_UNIT if module in SERIAL_IN_REPO else module

        def _assign_work_unit(self, node):
            if SERIAL_UNIT in self.workqueue:  # queued by size (number of tests); this one goes first
                self.workqueue.move_to_end(SERIAL_UNIT, last=False)
            super()._assign_work_unit(node)

    return ModuleScheduling(config, log)
