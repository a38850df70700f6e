# SLiM — One-shot Quantization and Sparsity with Low-rank Approximation for LLM Weight Compression
# Mozaffari, Yazdanbakhsh, Mehri Dehnavi, ICML 2025, arXiv 2410.09615.
#
# DAG (on the shared LM substrate, workflow/rules/shared/lm.smk, and the compiled kernels;
# {seeds}: one calibration seed per job at every scale, seed0, seed1, ...):
#   lm_wheel_model + lm_wikipedia ─> slim_lm_ladder ({seeds}: every recipe, perplexity + layer errors) ─────┐
#   lm_minilm, lm_word_sim, lm_corpus ─> slim_minilm_ladder ({seeds}: fidelity, Spearman) ───────────────────┼> slim_ladder_figure
#   kernels_build, lm_wheel_model ─> slim_speed (layers at LLaMA-2-7B and SmolLM2 shapes, decode, memory) ─┼> slim_speed_figure
#                                                                                                        └> slim_claims
# The causal LM: at tiny scale the wheel model of lm.model_id (SmolLM2-135M dequantized from its Q4_1 GGUF: the
# dense reference) on the Wikipedia articles; where lm.model_id is not a wheel model (config/full.yaml), the
# shared LM of lm_model_files() on the token splits of lm_tokens().
#
# Config keys read: slim.{seeds, calibration, evaluation, peft, recipes, ladder, extras, minilm, speed}
# (documented in config.yaml, schema in workflow/schemas/slim.schema.yaml).
#
# Paper-scale resources (config/full.yaml: the shared LM is Meta-Llama-3-8B, 128 calibration windows of
# 2048 tokens, WikiText-2 perplexity, 1000 PEFT steps): the ladders and the speed step run on the job's
# GPU. The causal-LM ladder compresses the model's 224 linears once per recipe (11 recipes), measures
# its perplexity and fine-tunes the adapters of one recipe: several hours per seed on one GPU, 12 hours
# asked, doubled on resubmission. Host memory: the fp32 model is loaded on the CPU before it moves to the
# GPU (32 GB). The MiniLM ladder and the speed step take minutes to an hour.


include: "helpers/slim.smk"


rule slim_lm_ladder:
    input:
        unpack(causal_lm_inputs),
        code=script_code("slim/lm_ladder.py"),
    output:
        metrics=f"{SLIM_OUT}/lm/ladder_{{seeds}}.json",
    log:
        log_path("slim", "lm_ladder_{seeds}"),
    benchmark:
        benchmark_path("slim", "lm_ladder_{seeds}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(7000 if LM["model_id"] == "gemma3-270m" else 4000, 64000),
        runtime=runtime_per_attempt(20, 720),
        gpu=at_scale(0, 1),
    params:
        model_dir=input_dir("config"),
        model_id=LM["model_id"] if lm_model_is_wheel() else None,
        seeds=lambda wc: group_seeds(wc.seeds, SLIM["seeds"]),
        recipes=SLIM["recipes"],
        names=slim_recipe_names(),
        calibration=SLIM["calibration"],
        evaluation=SLIM["evaluation"],
        peft=SLIM.get("lm_peft", SLIM["peft"]),
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
        metrics=f"{SLIM_OUT}/minilm/ladder_{{seeds}}.json",
    log:
        log_path("slim", "minilm_ladder_{seeds}"),
    benchmark:
        benchmark_path("slim", "minilm_ladder_{seeds}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(3000, 16000),
        runtime=runtime_per_attempt(20, 120),
        gpu=at_scale(0, 1),
    params:
        minilm_dir=input_dir("config"),
        corpus_dir=input_dir("train"),
        pairs_files={k: v for k, v in word_sim_files().items() if k != "lee"},
        seeds=lambda wc: group_seeds(wc.seeds, SLIM["seeds"]),
        recipes=SLIM["recipes"],
        names=SLIM["ladder"],  # the extras run on the causal LM only (tiny budget)
        minilm=SLIM["minilm"],
        peft=SLIM["peft"],
    script:
        "../scripts/slim/minilm_ladder.py"


rule slim_speed:
    input:
        **causal_lm_files(),
        kernels=kernels_built(),
        code=script_code("slim/speed.py"),
    output:
        metrics=f"{SLIM_OUT}/speed.json",
    log:
        log_path("slim", "speed"),
    benchmark:
        benchmark_path("slim", "speed")
    threads: at_scale(2, 4)
    resources:
        mem_mb=per_attempt(6000, 64000),
        runtime=runtime_per_attempt(20, 180),
        gpu=at_scale(0, 1),
    params:
        model_dir=input_dir("config"),
        speed=SLIM["speed"],
    script:
        "../scripts/slim/speed.py"


rule slim_ladder_figure:
    input:
        lm=slim_ladder_files("lm"),
        minilm=slim_ladder_files("minilm"),
        code=script_code("slim/ladder_figure.py"),
    output:
        figure=report(
            f"{SLIM_OUT}/figures/ladder.png",
            caption="../report/slim_ladder.rst",
            category="slim",
            subcategory="quality ladder",
        ),
        data=f"{SLIM_OUT}/figures/ladder.csv",
    log:
        log_path("slim", "ladder_figure"),
    benchmark:
        benchmark_path("slim", "ladder_figure")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 15),
    params:
        ladder=SLIM["ladder"],
    script:
        "../scripts/slim/ladder_figure.py"


rule slim_speed_figure:
    input:
        speed=rules.slim_speed.output.metrics,
        code=script_code("slim/speed_figure.py"),
    output:
        figure=report(
            f"{SLIM_OUT}/figures/speed.png",
            caption="../report/slim_speed.rst",
            category="slim",
            subcategory="speed",
        ),
    log:
        log_path("slim", "speed_figure"),
    benchmark:
        benchmark_path("slim", "speed_figure")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 15),
    script:
        "../scripts/slim/speed_figure.py"


rule slim_claims:
    input:
        lm=slim_ladder_files("lm"),
        minilm=slim_ladder_files("minilm"),
        speed=rules.slim_speed.output.metrics,
        figures=slim_figure_files(),
        declaration=f"{workflow.basedir}/src/methods/slim/claims.yaml",
        code=script_code("slim/claims.py"),
    output:
        claims=report(
            claims_path("slim"),
            caption="../report/claims.rst",
            category="slim",
            subcategory="claims",
        ),
        summary=f"{SLIM_OUT}/metrics_summary.json",
        metrics=f"{paper_dir('slim')}/metrics.json",
    log:
        log_path("slim", "claims"),
    benchmark:
        benchmark_path("slim", "claims")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 15),
    params:
        scale=SCALE,
        claim_shape=SLIM["speed"]["claim_shape"],
    script:
        "../scripts/slim/claims.py"


rule slim:
    input:
        rules.slim_claims.output.claims,
        slim_figure_files(),
        rules.slim_ladder_figure.output.data,
        [] if lm_model_is_wheel() else lm_paper_figures(),  # the trained LM's loss curve, where it is the LM
