"""Build the compiled kernels extension once (cached in csrc/build/<hash>/, see methods.kernels.paths).

`python -m methods.kernels.build` compiles it when a source under csrc/ (or a flag, or torch) changed and
otherwise reuses the library; the Makefile's test target and the Snakemake rule kernels_build call it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path

from .paths import CFLAGS, CSRC, LDFLAGS, NAME, build_dir, library_path, sources, with_cuda


def build(verbose: bool = False) -> Path:
    """Compile the extension if the sources changed (else reuse it) and load it into this process."""
    if not CSRC.is_dir():
        raise FileNotFoundError(
            f"{CSRC}: the kernel sources are missing (methods.kernels needs an editable install of the repo)"
        )
    from torch.utils.cpp_extension import load

    out = build_dir()
    out.mkdir(parents=True, exist_ok=True)
    cuda = with_cuda()
    load(
        name=NAME,
        sources=[str(s) for s in sources()],
        extra_cflags=CFLAGS + (["-DICML25_WITH_CUDA"] if cuda else []),
        extra_cuda_cflags=["-O3", "-DICML25_WITH_CUDA"],
        extra_ldflags=list(LDFLAGS),  # load() appends to this list in place
        extra_include_paths=[str(CSRC)],
        build_directory=str(out),
        with_cuda=cuda,
        is_python_module=False,
        verbose=verbose,
    )
    _prune_stale(out)
    return library_path()


def _prune_stale(keep: Path) -> None:
    """Remove the build folders of earlier source versions (each holds a few MB of objects)."""
    for d in keep.parent.iterdir():
        if d.is_dir() and d != keep and len(d.name) == len(keep.name):
            shutil.rmtree(d, ignore_errors=True)


def missing_cuda_message() -> str:
    """Why the CUDA ops would be left out of the build here, and the fix."""
    import torch

    if torch.version.cuda is None:
        why = f"torch {torch.__version__} is a CPU build"
    else:
        why = f"torch {torch.__version__} has CUDA {torch.version.cuda} but nvcc is not on PATH and CUDA_HOME is unset"
    return (
        f"{NAME}: the CUDA ops cannot be built on this host ({why}); the GPU jobs would fall back to the "
        f"PyTorch reference ops. Build on a GPU node with the CUDA toolkit: the container (containers/) has it, "
        f"or `module load cuda` / set CUDA_HOME in the venv route."
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--stamp", type=Path, help="write the library path to this file after a successful build")
    ap.add_argument(
        "--require-cuda",
        action="store_true",
        help="fail instead of building the C++ ops alone when torch has no CUDA or nvcc is missing (paper scale)",
    )
    args = ap.parse_args(argv)
    if args.require_cuda and not with_cuda():
        raise SystemExit(missing_cuda_message())
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
