# NestQuant — Nested Lattice Quantization for Matrix Products and LLMs
# Savkin, Porat, Ordentlich, Polyanskiy, ICML 2025, arXiv 2502.09720.
#
# DAG (on the shared LM substrate, workflow/rules/shared/lm.smk, and the compiled kernels;
# {seeds}: one seed per job at every scale, seed0, seed1, ...):
#   kernels_build ─> nestquant_synthetic ({seeds}: error vs rate, Gaussian and Student-t) ─> synthetic figure ┐
#   lm_wheel_model + lm_wikipedia ─> nestquant_lm ({seeds}: W4A4KV4 and W4 perplexity of every method) ┐         │
#   lm_minilm, lm_word_sim, lm_corpus ─> nestquant_minilm ({seeds}: W4 fidelity) ───────┴> quality figure ──────┴> claims
#
# Config keys read: nestquant.{seeds, lm_seeds, quant, synthetic, claim_q, settings, calibration, evaluation,
# minilm}
# (documented in config.yaml, schema in workflow/schemas/nestquant.schema.yaml).
#
# The causal LM: at tiny scale the wheel model of lm.model_id (SmolLM2-135M dequantized from its Q4_1 GGUF: the
# dense reference) on the Wikipedia articles; where lm.model_id is not a wheel model (config/full.yaml), the shared
# LM of lm_model_files() on the token splits of lm_tokens().
#
# Paper-scale resources (config/full.yaml: the shared LM is Meta-Llama-3-8B, 128 calibration windows of
# 2048 tokens, WikiText-2 perplexity, `calibration.layerwise`): the model steps run on the job's GPU. The
# causal-LM step quantizes a freshly loaded bf16 model block by block for each of 5 methods x 2 settings
# and measures its perplexity: several hours per seed on one GPU, 12 hours asked, doubled on
# resubmission; host memory holds the bf16 checkpoint while it loads. The synthetic matrices keep their
# tiny size at paper scale (a CPU job of minutes, no GPU); MiniLM takes minutes on a GPU.


include: "helpers/nestquant.smk"


rule nestquant_synthetic:
    input:
        kernels=kernels_built(),
        code=script_code("nestquant/synthetic.py"),
    output:
        metrics=f"{NESTQUANT_OUT}/synthetic/{{seeds}}.json",
    log:
        log_path("nestquant", "synthetic_{seeds}"),
    benchmark:
        benchmark_path("nestquant", "synthetic_{seeds}")
    threads: 1
    resources:
        mem_mb=per_attempt(2000, 2000),
        runtime=runtime_per_attempt(10, 30),
    params:
        seeds=lambda wc: group_seeds(wc.seeds, NESTQUANT["seeds"]),
        synthetic=NESTQUANT["synthetic"],
        weight_betas=NESTQUANT["quant"]["betas"]["weights"],
    script:
        "../scripts/nestquant/synthetic.py"


rule nestquant_lm:
    input:
        unpack(causal_lm_inputs),
        kernels=kernels_built(),
        code=script_code("nestquant/lm.py"),
    output:
        metrics=f"{NESTQUANT_OUT}/lm/{{seeds}}.json",
    log:
        log_path("nestquant", "lm_{seeds}"),
    benchmark:
        benchmark_path("nestquant", "lm_{seeds}")
    priority: LONG_CHAIN_PRIORITY
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(6000 if LM["model_id"] == "gemma3-270m" else 3000, 80000),
        runtime=runtime_per_attempt(20, 720),
        gpu=at_scale(0, 1),
    params:
        model_dir=input_dir("config"),
        model_id=LM["model_id"] if lm_model_is_wheel() else None,
        seeds=lambda wc: group_seeds(
            wc.seeds, NESTQUANT.get("lm_seeds", NESTQUANT["seeds"])
        ),
        quant=NESTQUANT["quant"],
        settings=NESTQUANT["settings"],
        calibration=NESTQUANT["calibration"],
        evaluation=NESTQUANT["evaluation"],
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
        metrics=f"{NESTQUANT_OUT}/minilm/{{seeds}}.json",
    log:
        log_path("nestquant", "minilm_{seeds}"),
    benchmark:
        benchmark_path("nestquant", "minilm_{seeds}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(3000, 16000),
        runtime=runtime_per_attempt(20, 120),
        gpu=at_scale(0, 1),
    params:
        minilm_dir=input_dir("config"),
        corpus_dir=input_dir("train"),
        pairs_files={k: v for k, v in word_sim_files().items() if k != "lee"},
        seeds=lambda wc: group_seeds(wc.seeds, NESTQUANT["seeds"]),
        quant=NESTQUANT["quant"],
        minilm=NESTQUANT["minilm"],
    script:
        "../scripts/nestquant/minilm.py"


rule nestquant_synthetic_figure:
    input:
        synthetic=nestquant_seed_files("synthetic"),
        code=script_code("nestquant/synthetic_figure.py"),
    output:
        figure=report(
            f"{NESTQUANT_OUT}/figures/synthetic.png",
            caption="../report/nestquant_synthetic.rst",
            category="nestquant",
            subcategory="synthetic matrices",
        ),
        data=f"{NESTQUANT_OUT}/figures/synthetic.csv",
    log:
        log_path("nestquant", "synthetic_figure"),
    benchmark:
        benchmark_path("nestquant", "synthetic_figure")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 15),
    params:
        claim_q=NESTQUANT["claim_q"],
    script:
        "../scripts/nestquant/synthetic_figure.py"


rule nestquant_quality_figure:
    input:
        lm=nestquant_seed_files("lm"),
        minilm=nestquant_seed_files("minilm"),
        code=script_code("nestquant/quality_figure.py"),
    output:
        figure=report(
            f"{NESTQUANT_OUT}/figures/quality.png",
            caption="../report/nestquant_quality.rst",
            category="nestquant",
            subcategory="models at 4 bits",
        ),
    log:
        log_path("nestquant", "quality_figure"),
    benchmark:
        benchmark_path("nestquant", "quality_figure")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 15),
    params:
        settings=NESTQUANT["settings"],
    script:
        "../scripts/nestquant/quality_figure.py"


rule nestquant_claims:
    input:
        synthetic=nestquant_seed_files("synthetic"),
        lm=nestquant_seed_files("lm"),
        minilm=nestquant_seed_files("minilm"),
        figures=nestquant_figure_files(),
        declaration=f"{workflow.basedir}/src/methods/nestquant/claims.yaml",
        code=script_code("nestquant/claims.py"),
    output:
        claims=report(
            claims_path("nestquant"),
            caption="../report/claims.rst",
            category="nestquant",
            subcategory="claims",
        ),
        summary=f"{NESTQUANT_OUT}/metrics_summary.json",
        metrics=f"{paper_dir('nestquant')}/metrics.json",
    log:
        log_path("nestquant", "claims"),
    benchmark:
        benchmark_path("nestquant", "claims")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 15),
    params:
        scale=SCALE,
        claim_q=NESTQUANT["claim_q"],
    script:
        "../scripts/nestquant/claims.py"


rule nestquant:
    input:
        rules.nestquant_claims.output.claims,
        nestquant_figure_files(),
        rules.nestquant_synthetic_figure.output.data,
        [] if lm_model_is_wheel() else lm_paper_figures(),  # the trained LM's loss curve, where it is the LM
