# NestQuant — Nested Lattice Quantization for Matrix Products and LLMs
# Savkin, Porat, Ordentlich, Polyanskiy, ICML 2025, arXiv 2502.09720.
#
# DAG (on the shared LM substrate, workflow/rules/shared/lm.smk, and the compiled kernels):
#   kernels_build ─> nestquant_synthetic (seed: error vs rate, Gaussian and Student-t) ─> synthetic figure ┐
#   lm_train ─> nestquant_lm (seed: W4A4KV4 and W4 perplexity of every method) ──────┐                      │
#   lm_minilm, lm_word_sim, lm_corpus ─> nestquant_minilm (seed: W4A4 fidelity) ─────┴> quality figure ──────┴> claims
#
# Config keys read: nestquant.{seeds, quant, synthetic, claim_q, settings, calibration, evaluation, minilm}
# (documented in config.yaml, schema in workflow/schemas/nestquant.schema.yaml).


include: "helpers/nestquant.smk"


rule nestquant_synthetic:
    input:
        kernels=kernels_built(),
        code=script_code("nestquant/synthetic.py"),
    output:
        metrics=f"{NQ_OUT}/synthetic/s{{seed}}.json",
    log:
        log_path("nestquant", "synthetic_s{seed}"),
    benchmark:
        benchmark_path("nestquant", "synthetic_s{seed}")
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        synthetic=NQ["synthetic"],
        weight_betas=NQ["quant"]["betas"]["weights"],
    script:
        "../scripts/nestquant/synthetic.py"


rule nestquant_lm:
    input:
        **lm_model_files(),
        tokens=lm_tokens(),
        kernels=kernels_built(),
        code=script_code("nestquant/lm.py"),
    output:
        metrics=f"{NQ_OUT}/lm/s{{seed}}.json",
    log:
        log_path("nestquant", "lm_s{seed}"),
    benchmark:
        benchmark_path("nestquant", "lm_s{seed}")
    threads: 1
    resources:
        mem_mb=at_scale(3000, 80000),
        runtime=at_scale(20, 720),
        gpu=at_scale(0, 1),
    params:
        model_dir=input_dir("config"),
        quant=NQ["quant"],
        settings=NQ["settings"],
        calibration=NQ["calibration"],
        evaluation=NQ["evaluation"],
    script:
        "../scripts/nestquant/lm.py"


rule nestquant_minilm:
    input:
        **minilm_files(),
        **word_sim_files(),
        train=rules.lm_corpus.output.train,
        test=rules.lm_corpus.output.test,
        kernels=kernels_built(),
        code=script_code("nestquant/minilm.py"),
    output:
        metrics=f"{NQ_OUT}/minilm/s{{seed}}.json",
    log:
        log_path("nestquant", "minilm_s{seed}"),
    benchmark:
        benchmark_path("nestquant", "minilm_s{seed}")
    threads: 1
    resources:
        mem_mb=at_scale(3000, 16000),
        runtime=at_scale(20, 120),
    params:
        minilm_dir=input_dir("config"),
        corpus_dir=input_dir("train"),
        pairs_files={k: v for k, v in word_sim_files().items() if k != "lee"},
        quant=NQ["quant"],
        minilm=NQ["minilm"],
    script:
        "../scripts/nestquant/minilm.py"


rule nestquant_synthetic_figure:
    input:
        synthetic=nq_per_seed("synthetic"),
        code=script_code("nestquant/synthetic_figure.py"),
    output:
        figure=report(
            f"{NQ_OUT}/figures/synthetic.png",
            caption="../report/nestquant_synthetic.rst",
            category="nestquant",
            subcategory="synthetic matrices",
        ),
    log:
        log_path("nestquant", "synthetic_figure"),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        claim_q=NQ["claim_q"],
    script:
        "../scripts/nestquant/synthetic_figure.py"


rule nestquant_quality_figure:
    input:
        lm=nq_per_seed("lm"),
        minilm=nq_per_seed("minilm"),
        code=script_code("nestquant/quality_figure.py"),
    output:
        figure=report(
            f"{NQ_OUT}/figures/quality.png",
            caption="../report/nestquant_quality.rst",
            category="nestquant",
            subcategory="models at 4 bits",
        ),
    log:
        log_path("nestquant", "quality_figure"),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        settings=NQ["settings"],
    script:
        "../scripts/nestquant/quality_figure.py"


rule nestquant_claims:
    input:
        synthetic=nq_per_seed("synthetic"),
        lm=nq_per_seed("lm"),
        minilm=nq_per_seed("minilm"),
        figures=nq_figures(),
        declaration=f"{workflow.basedir}/src/methods/nestquant/claims.yaml",
        code=script_code("nestquant/claims.py"),
    output:
        claims=report(
            claims_path("nestquant"),
            caption="../report/claims.rst",
            category="nestquant",
            subcategory="claims",
        ),
        summary=f"{NQ_OUT}/metrics_summary.json",
    log:
        log_path("nestquant", "claims"),
    benchmark:
        benchmark_path("nestquant", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE,
        claim_q=NQ["claim_q"],
    script:
        "../scripts/nestquant/claims.py"


rule nestquant:
    input:
        rules.nestquant_claims.output.claims,
        nq_figures(),
