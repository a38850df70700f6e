"""Where the compiled kernels extension lives (csrc/build/<hash>/); shared by methods.kernels and its build.

The build goes through torch.utils.cpp_extension (ninja + g++, against the installed torch; no build
isolation, no second torch). Its folder is csrc/build/<hash>/ where the hash covers every source file
under csrc/, the compiler flags and the torch version, so an edited source gives a new folder and a
rebuild, and an unchanged tree reuses the library. `python -m methods.kernels.build` builds it (the
Makefile's test target and the Snakemake rule kernels_build call this); importing methods.kernels only
loads an existing library and never compiles.

CUDA: where torch has CUDA and nvcc is found, csrc/cuda/*.cu are compiled into the same library with
-DICML25_WITH_CUDA, which registers their launchers for the CUDA dispatch key.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

import torch

NAME = "icml25_kernels"
CSRC = Path(__file__).resolve().parents[3] / "csrc"
CFLAGS = ["-O3", "-march=native", "-fopenmp", "-ffp-contract=off", "-fno-math-errno"]
LDFLAGS = ["-fopenmp"]


def with_cuda() -> bool:
    """Whether the CUDA sources go into the build: torch has CUDA and nvcc is on PATH (or in CUDA_HOME)."""
    if torch.version.cuda is None:
        return False
    from torch.utils.cpp_extension import CUDA_HOME

    return CUDA_HOME is not None or shutil.which("nvcc") is not None


def sources() -> list[Path]:
    cpp = sorted((CSRC / "cpu").glob("*.cpp"))
    return cpp + (sorted((CSRC / "cuda").glob("*.cu")) if with_cuda() else [])


def _cpu_flags() -> str:
    """The host's CPU feature flags: the build uses -march=native, so another CPU needs another build."""
    try:
        with open("/proc/cpuinfo") as f:
            return next((line for line in f if line.startswith("flags")), "")
    except OSError:
        return ""


def source_hash() -> str:
    h = hashlib.sha256()
    for p in sorted(CSRC.rglob("*")):
        if p.is_file() and "build" not in p.relative_to(CSRC).parts and p.suffix in {".cpp", ".h", ".cu", ".cuh"}:
            h.update(str(p.relative_to(CSRC)).encode())
            h.update(p.read_bytes())
    h.update(" ".join(CFLAGS + LDFLAGS).encode())
    h.update(f"{torch.__version__} {sys.version_info[:2]} cuda={with_cuda()} {_cpu_flags()}".encode())
    return h.hexdigest()[:16]


def build_dir() -> Path:
    return CSRC / "build" / source_hash()


def library_path() -> Path:
    return build_dir() / f"{NAME}.so"
