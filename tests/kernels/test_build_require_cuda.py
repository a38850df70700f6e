"""kernels_build at paper scale (--require-cuda) fails loudly where the CUDA ops cannot be built."""

import subprocess
import sys

import pytest
import torch

from methods.kernels.paths import with_cuda


@pytest.mark.skipif(with_cuda(), reason="this host can build the CUDA ops; the failure path needs one that cannot")
def test_require_cuda_fails_naming_why_before_building():
    proc = subprocess.run(
        [sys.executable, "-m", "methods.kernels.build", "--require-cuda"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode != 0
    assert "the CUDA ops cannot be built on this host" in proc.stderr
    why = "is a CPU build" if torch.version.cuda is None else "nvcc is not on PATH"
    assert why in proc.stderr and "fall back to the PyTorch reference ops" in proc.stderr
