# Compiled kernels (not a paper): csrc/ built into torch.ops.icml25 by torch.utils.cpp_extension.
#
# DAG: kernels_build (once per source change; the library itself is cached in csrc/build/<hash>/)
#   ─> every rule that lists kernels_built() among its inputs (slim, nestquant, alspec kernels and timings).
#
# Config keys read: none (outdir only).


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
    threads: 2
    resources:
        mem_mb=4000,
        runtime=15,
    params:
        python=sys.executable,
    shell:
        "{params.python:q} -m methods.kernels.build --stamp {output:q} > {log:q} 2>&1"
