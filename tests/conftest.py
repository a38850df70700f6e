"""Run Snakemake on the real workflow from the repository root, as a user would."""

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
