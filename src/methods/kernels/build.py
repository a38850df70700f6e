"""Build (once, cached) and locate the compiled kernels extension (csrc/ -> torch.ops.icml25.*).

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

import argparse
import hashlib
import os
import shutil
import sys
import time
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


def source_hash() -> str:
    h = hashlib.sha256()
    for p in sorted(CSRC.rglob("*")):
        if p.is_file() and "build" not in p.relative_to(CSRC).parts and p.suffix in {".cpp", ".h", ".cu", ".cuh"}:
            h.update(str(p.relative_to(CSRC)).encode())
            h.update(p.read_bytes())
    h.update(" ".join(CFLAGS + LDFLAGS).encode())
    h.update(f"{torch.__version__} {sys.version_info[:2]} cuda={with_cuda()}".encode())
    return h.hexdigest()[:16]


def build_dir() -> Path:
    return CSRC / "build" / source_hash()


def library_path() -> Path:
    return build_dir() / f"{NAME}.so"


def build(verbose: bool = False) -> Path:
    """Compile the extension if the sources changed (else reuse it) and load it into this process."""
    if not CSRC.is_dir():
        raise FileNotFoundError(f"{CSRC}: the kernel sources are missing (methods.kernels needs an editable install of the repo)")
    from torch.utils.cpp_extension import load

    out = build_dir()
    out.mkdir(parents=True, exist_ok=True)
    cuda = with_cuda()
    load(
        name=NAME,
        sources=[str(s) for s in sources()],
        extra_cflags=CFLAGS + (["-DICML25_WITH_CUDA"] if cuda else []),
        extra_cuda_cflags=["-O3", "-DICML25_WITH_CUDA"],
        extra_ldflags=LDFLAGS,
        extra_include_paths=[str(CSRC)],
        build_directory=str(out),
        with_cuda=cuda,
        is_python_module=False,
        verbose=verbose,
    )
    return library_path()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--stamp", type=Path, help="write the library path to this file after a successful build")
    args = ap.parse_args(argv)
    t0 = time.time()
    existed = library_path().exists()
    path = build(verbose=args.verbose)
    print(f"{NAME}: {'up to date' if existed else 'built'} {path} ({time.time() - t0:.1f} s)", flush=True)
    if args.stamp:
        args.stamp.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.stamp.with_suffix(args.stamp.suffix + ".tmp")
        tmp.write_text(f"{path}\n")
        os.replace(tmp, args.stamp)


if __name__ == "__main__":
    main()
