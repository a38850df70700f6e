# Multimodal alignment: "Understanding the Emergence of Multimodal Representation Alignment",
# Tjandrasuwita, Ekbote, Ziyin, Liang, ICML 2025, arXiv 2502.16282. A controlled two-modality
# generator (shared vs unique label bits, a random nonlinear transform of depth D on one modality),
# unimodal encoders of growing depth trained independently, alignment (mutual k-NN, unbiased CKA,
# max over layer pairs) and its Pearson correlation with accuracy; a two-view real-data stand-in.
#
# DAG:
#   mm_alignment_synthetic (one job per uniqueness U) ──┐
#                                                       ├─> mm_alignment_figures ─┐
#   mm_alignment_real (digits: left vs right half) ─────┤                         ├─> mm_alignment
#                                                       └─> mm_alignment_claims ──┘
#
# Config keys read: mm_alignment.{seeds, synthetic, real} (documented in config.yaml, schema in
# workflow/schemas/mm_alignment.schema.yaml).


include: "helpers/mm_alignment.smk"


rule mm_alignment_synthetic:
    input:
        code=script_code("mm_alignment/synthetic.py"),
    output:
        metrics=f"{MMA_OUT}/synthetic/U{{u,[0-9]+}}.json",
    log:
        log_path("mm_alignment", "synthetic_U{u}"),
    benchmark:
        benchmark_path("mm_alignment", "synthetic_U{u}")
    threads: 1
    resources:
        mem_mb=1500,
        runtime=at_scale(5, 720),
    params:
        hetero_depths=MMA_D,
        seeds=MMA["seeds"],
        generator=MMA["synthetic"]["generator"],
        encoder=MMA["synthetic"]["encoder"],
        train=MMA["synthetic"]["train"],
        train_fixed=MMA["synthetic"]["train_fixed"],
        align=MMA["synthetic"]["align"],
    script:
        "../scripts/mm_alignment/synthetic.py"


rule mm_alignment_real:
    input:
        code=script_code("mm_alignment/real.py"),
    output:
        metrics=f"{MMA_OUT}/real/metrics.json",
    log:
        log_path("mm_alignment", "real"),
    benchmark:
        benchmark_path("mm_alignment", "real")
    threads: 1
    resources:
        mem_mb=1500,
        runtime=at_scale(5, 240),
    params:
        source=MMA["real"]["source"],
        seeds=MMA["seeds"],
        encoder=MMA["real"]["encoder"],
        train=MMA["real"]["train"],
        align=MMA["real"]["align"],
    script:
        "../scripts/mm_alignment/real.py"


rule mm_alignment_figures:
    input:
        **mma_synthetic_files(),
        real=rules.mm_alignment_real.output.metrics,
        code=script_code("mm_alignment/figures.py"),
    output:
        correlation=report(
            f"{MMA_OUT}/figures/correlation_vs_uniqueness.png",
            caption="../report/mm_alignment_correlation.rst",
            category="mm_alignment",
            subcategory="synthetic",
        ),
        scatter=report(
            f"{MMA_OUT}/figures/alignment_vs_accuracy.png",
            caption="../report/mm_alignment_scatter.rst",
            category="mm_alignment",
            subcategory="alignment vs accuracy",
        ),
    log:
        log_path("mm_alignment", "figures"),
    benchmark:
        benchmark_path("mm_alignment", "figures")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        uniqueness=MMA_U,
    script:
        "../scripts/mm_alignment/figures.py"


rule mm_alignment_claims:
    input:
        **mma_synthetic_files(),
        real=rules.mm_alignment_real.output.metrics,
        figures=mma_figures(),
        declaration=f"{workflow.basedir}/src/methods/mm_alignment/claims.yaml",
        code=script_code("mm_alignment/claims.py"),
    output:
        claims=report(
            claims_path("mm_alignment"),
            caption="../report/claims.rst",
            category="mm_alignment",
            subcategory="claims",
        ),
        summary=f"{MMA_OUT}/metrics_summary.json",
    log:
        log_path("mm_alignment", "claims"),
    benchmark:
        benchmark_path("mm_alignment", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE,
        uniqueness=MMA_U,
    script:
        "../scripts/mm_alignment/claims.py"


rule mm_alignment:
    input:
        rules.mm_alignment_claims.output.claims,
        mma_figures(),
