# SLiM — One-shot Quantization and Sparsity with Low-rank Approximation for LLM Weight Compression
# Mozaffari, Yazdanbakhsh, Mehri Dehnavi, ICML 2025, arXiv 2410.09615.
#
# DAG (on the shared LM substrate, workflow/rules/shared/lm.smk, and the compiled kernels):
#   lm_train ─> slim_lm_ladder (calibration seed: every recipe, perplexity + layer errors) ──┐
#   lm_minilm, lm_word_sim, lm_corpus ─> slim_minilm_ladder (seed: fidelity, Spearman) ─────┼> slim_ladder_figure
#   kernels_build, lm_train ─> slim_speed (layers at LLaMA-2-7B shapes, decode, memory) ─────┼> slim_speed_figure
#                                                                                          └> slim_claims
#
# Config keys read: slim.{seeds, calibration, evaluation, peft, recipes, ladder, extras, minilm, speed}
# (documented in config.yaml, schema in workflow/schemas/slim.schema.yaml).


include: "helpers/slim.smk"


rule slim_lm_ladder:
    input:
        **lm_model_files(),
        tokens=lm_tokens(),
        code=script_code("slim/lm_ladder.py"),
    output:
        metrics=f"{SL_OUT}/lm/ladder_s{{seed}}.json",
    log:
        log_path("slim", "lm_ladder_s{seed}"),
    benchmark:
        benchmark_path("slim", "lm_ladder_s{seed}")
    threads: 1
    resources:
        mem_mb=at_scale(3000, 60000),
        runtime=at_scale(20, 600),
        gpu=at_scale(0, 1),
    params:
        model_dir=input_dir("config"),
        recipes=SL["recipes"],
        names=sl_recipe_names(),
        calibration=SL["calibration"],
        evaluation=SL["evaluation"],
        peft=SL["peft"],
    script:
        "../scripts/slim/lm_ladder.py"


rule slim_minilm_ladder:
    input:
        **minilm_files(),
        **word_sim_files(),
        train=rules.lm_corpus.output.train,
        validation=rules.lm_corpus.output.validation,
        test=rules.lm_corpus.output.test,
        code=script_code("slim/minilm_ladder.py"),
    output:
        metrics=f"{SL_OUT}/minilm/ladder_s{{seed}}.json",
    log:
        log_path("slim", "minilm_ladder_s{seed}"),
    benchmark:
        benchmark_path("slim", "minilm_ladder_s{seed}")
    threads: 1
    resources:
        mem_mb=at_scale(3000, 16000),
        runtime=at_scale(20, 120),
    params:
        minilm_dir=input_dir("config"),
        corpus_dir=input_dir("train"),
        pairs_files={k: v for k, v in word_sim_files().items() if k != "lee"},
        recipes=SL["recipes"],
        names=SL["ladder"],  # the extras run on the small Llama only (tiny budget)
        minilm=SL["minilm"],
        peft=SL["peft"],
    script:
        "../scripts/slim/minilm_ladder.py"


rule slim_speed:
    input:
        **lm_model_files(),
        kernels=kernels_built(),
        code=script_code("slim/speed.py"),
    output:
        metrics=f"{SL_OUT}/speed.json",
    log:
        log_path("slim", "speed"),
    benchmark:
        benchmark_path("slim", "speed")
    threads: 2
    resources:
        mem_mb=at_scale(6000, 60000),
        runtime=at_scale(20, 120),
        gpu=at_scale(0, 1),
    params:
        model_dir=input_dir("config"),
        speed=SL["speed"],
    script:
        "../scripts/slim/speed.py"


rule slim_ladder_figure:
    input:
        lm=sl_lm_metrics(),
        minilm=sl_minilm_metrics(),
        code=script_code("slim/ladder_figure.py"),
    output:
        figure=report(
            f"{SL_OUT}/figures/ladder.png",
            caption="../report/slim_ladder.rst",
            category="slim",
            subcategory="quality ladder",
        ),
    log:
        log_path("slim", "ladder_figure"),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        ladder=SL["ladder"],
    script:
        "../scripts/slim/ladder_figure.py"


rule slim_speed_figure:
    input:
        speed=rules.slim_speed.output.metrics,
        code=script_code("slim/speed_figure.py"),
    output:
        figure=report(
            f"{SL_OUT}/figures/speed.png",
            caption="../report/slim_speed.rst",
            category="slim",
            subcategory="speed",
        ),
    log:
        log_path("slim", "speed_figure"),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/slim/speed_figure.py"


rule slim_claims:
    input:
        lm=sl_lm_metrics(),
        minilm=sl_minilm_metrics(),
        speed=rules.slim_speed.output.metrics,
        figures=sl_figures(),
        declaration=f"{workflow.basedir}/src/methods/slim/claims.yaml",
        code=script_code("slim/claims.py"),
    output:
        claims=report(
            claims_path("slim"),
            caption="../report/claims.rst",
            category="slim",
            subcategory="claims",
        ),
        summary=f"{SL_OUT}/metrics_summary.json",
    log:
        log_path("slim", "claims"),
    benchmark:
        benchmark_path("slim", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE,
        claim_shape=SL["speed"]["claim_shape"],
    script:
        "../scripts/slim/claims.py"


rule slim:
    input:
        rules.slim_claims.output.claims,
        sl_figures(),
