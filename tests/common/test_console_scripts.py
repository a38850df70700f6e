"""The user-facing tools are installed as console scripts by the README's set-up (a fresh install in CI)."""

import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    "script, says",
    [
        ("icml25-pull", "make pull"),
        ("icml25-readme-table", "docs/run"),
        ("icml25-diff", "verdicts changed"),
        ("icml25-explain", "null"),
    ],
)
def test_console_script_is_installed_and_runs(script, says):
    exe = BIN / script
    assert exe.exists(), f"{exe} missing: reinstall the project (make venv)"
    proc = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert says in proc.stdout


def test_diff_script_names_a_bad_argument(tmp_path):
    proc = subprocess.run([str(BIN / "icml25-diff"), str(tmp_path), "no-such-revision"], capture_output=True, text=True)
    assert proc.returncode != 0 and str(tmp_path) in proc.stderr + proc.stdout
