# Compiled kernels (not a paper): csrc/ built into torch.ops.icml25 by torch.utils.cpp_extension.
#
# DAG: kernels_build (once per source change; the library itself is cached in csrc/build/<hash>/)
#   ─> every rule that lists kernels_built() among its inputs (slim, nestquant, alspec kernels and timings).
#
# Config keys read: none (outdir only).
#
# Paper scale: the library's cache key holds the build host's CPU flags (-march=native) and whether CUDA
# (nvcc) was found, and the jobs look the library up under their own host's key. So the rule asks for a
# GPU at paper scale, which sends it to the GPU partition where the jobs that use it run (nvcc compiles for
# the GPU it sees), and fails (--require-cuda) instead of building the C++ ops alone where torch has no
# CUDA or nvcc is missing. A job that finds no library for its host falls back to the PyTorch reference
# ops (correct, slower) with a warning. The build itself is a few minutes of CPU.


include: "../helpers/kernels.smk"


rule kernels_build:
    input:
        KERNELS_SOURCES,
    output:
        kernels_built(),
    log:
        log_path("kernels", "build"),
    benchmark:
        benchmark_path("kernels", "build")
    priority: LONG_CHAIN_PRIORITY
    threads: at_scale(1, 2)
    resources:
        mem_mb=per_attempt(4000, 8000),
        runtime=runtime_per_attempt(15, 30),
        gpu=at_scale(0, 1),
    params:
        python=job_python(),
        require_cuda=at_scale("", "--require-cuda"),
    shell:
        "{params.python:q} -m methods.kernels.build --stamp {output:q} {params.require_cuda} > {log:q} 2>&1"
