# Input function of the compiled kernels (rule kernels_build in workflow/rules/shared/kernels.smk).
# A rule whose job calls methods.kernels lists `kernels=kernels_built()` among its inputs, so that the
# extension is compiled once, before it, instead of every job falling back to the slow reference.
import sys

KERNELS_SOURCES = sorted(
    str(p)
    for pattern in (
        "csrc/cpu/*.cpp",
        "csrc/cpu/*.h",
        "csrc/cuda/*.cu",
        "csrc/cuda/*.cuh",
    )
    for p in Path(workflow.basedir).glob(pattern)
) + [
    str(Path(workflow.basedir) / "src/methods/kernels" / f)
    for f in ("paths.py", "build.py")
]


def kernels_built():
    """Stamp file written once the extension is built for the current sources (holds the library path)."""
    return f"{OUTDIR}/kernels/build.txt"
