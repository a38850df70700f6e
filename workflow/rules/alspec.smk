# ALSpec — Attention-Level Speculation
# Cai, Vora, Zhang, O'Connor, Jeffrey, ICML 2025 (PMLR 267:6291-6318).
#
# DAG:
#   alspec_train (small Llama on the synthetic tasks) ─> alspec_evaluate (per task: local, recall, copy) ─┐
#   lm_wheel_model + lm_wikipedia (pretrained LM, workflow/rules/shared/lm.smk) ─> alspec_evaluate_lm ───┤
#   alspec_train ─> alspec_timing (two workers vs one: tokens, latency vs hit rate, kernel times) ──────┴> alspec_figures, alspec_claims
#
# Config keys read: alspec.{seed, sink, window, lams, granularity, tasks, model, train, eval, lm, timing}
# (documented in config.yaml, schema in workflow/schemas/alspec.schema.yaml). One seed (alspec.seed): no
# seed wildcard.
#
# Paper-scale resources (config/full.yaml: 4096-token tasks, sink and window 128, the shared LM is
# Meta-Llama-3-8B at a 4096-token context): training (20,000 steps of 32 x 4096 tokens), the per-task
# decodes and the LM's decodes (7 modes, teacher forced and free running, token by token through the
# speculative engine) run on the job's GPU, an hour to a few hours each; 10 hours asked, doubled on
# resubmission. The timing step stays two CPU processes at every scale (two workers in place of the
# paper's two NPUs; see methods/alspec/timing.py), no GPU.


include: "helpers/alspec.smk"


wildcard_constraints:
    alspec_task="|".join(ALSPEC_TASKS),


rule alspec_train:
    input:
        kernels=kernels_built(),
        code=script_code("alspec/train.py"),
    output:
        config=f"{ALSPEC_OUT}/task_model/config.json",
        weights=f"{ALSPEC_OUT}/task_model/model.safetensors",
        info=f"{ALSPEC_OUT}/task_model/training.json",
    log:
        log_path("alspec", "train"),
    benchmark:
        benchmark_path("alspec", "train")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(2000, 32000),
        runtime=runtime_per_attempt(15, 600),
        gpu=at_scale(0, 1),
    params:
        tasks=ALSPEC["tasks"],
        model=ALSPEC["model"],
        train=ALSPEC["train"],
        sink=ALSPEC["sink"],
        window=ALSPEC["window"],
        seed=ALSPEC["seed"],
    script:
        "../scripts/alspec/train.py"


rule alspec_evaluate:
    input:
        config=rules.alspec_train.output.config,
        weights=rules.alspec_train.output.weights,
        kernels=kernels_built(),
        code=script_code("alspec/evaluate.py"),
    output:
        metrics=f"{ALSPEC_OUT}/metrics/{{alspec_task}}.json",
    log:
        log_path("alspec", "evaluate_{alspec_task}"),
    benchmark:
        benchmark_path("alspec", "evaluate_{alspec_task}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(2000, 32000),
        runtime=runtime_per_attempt(15, 600),
        gpu=at_scale(0, 1),
    params:
        tasks=ALSPEC["tasks"],
        sink=ALSPEC["sink"],
        window=ALSPEC["window"],
        lams=ALSPEC["lams"],
        granularity=ALSPEC["granularity"],
        eval=ALSPEC["eval"],
        seed=ALSPEC["seed"],
        draws=ALSPEC.get("draws", 4),
    script:
        "../scripts/alspec/evaluate.py"


# The paper's LLM result on a real pretrained LM: SmolLM2-135M (dequantized from its Q4_1 GGUF) on the
# Wikipedia test articles at tiny scale, the checkpoint of lm.model_id at full scale.
rule alspec_evaluate_lm:
    input:
        **lm_pretrained_files(),
        test=wikipedia_files()["test"],
        kernels=kernels_built(),
        code=script_code("alspec/evaluate_lm.py"),
    output:
        metrics=f"{ALSPEC_OUT}/metrics/lm.json",
    log:
        log_path("alspec", "evaluate_lm"),
    benchmark:
        benchmark_path("alspec", "evaluate_lm")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(4000, 80000),
        runtime=runtime_per_attempt(15, 600),
        gpu=at_scale(0, 1),
    params:
        model_dir=input_dir("config"),
        sink=ALSPEC["sink"],
        window=ALSPEC["window"],
        lams=ALSPEC["lams"],
        granularity=ALSPEC["granularity"],
        lm=ALSPEC["lm"],
        draws=ALSPEC.get("draws", 4),
    script:
        "../scripts/alspec/evaluate_lm.py"


# Two processes pinned to one core each: the job takes both cores so nothing else runs beside it.
rule alspec_timing:
    input:
        config=rules.alspec_train.output.config,
        weights=rules.alspec_train.output.weights,
        kernels=kernels_built(),
        code=script_code("alspec/timing.py"),
    output:
        timing=f"{ALSPEC_OUT}/timing.json",
    log:
        log_path("alspec", "timing"),
    benchmark:
        benchmark_path("alspec", "timing")
    threads: 2
    resources:
        mem_mb=per_attempt(4000, 64000),
        runtime=runtime_per_attempt(15, 120),
    params:
        tasks=ALSPEC["tasks"],
        sink=ALSPEC["sink"],
        window=ALSPEC["window"],
        timing=ALSPEC["timing"],
        seed=ALSPEC["seed"],
    script:
        "../scripts/alspec/timing.py"


rule alspec_figures:
    input:
        tasks=alspec_task_metrics(),
        lm=rules.alspec_evaluate_lm.output.metrics,
        timing=rules.alspec_timing.output.timing,
        code=script_code("alspec/figures.py"),
    output:
        quality=report(
            f"{ALSPEC_OUT}/figures/quality.png",
            caption="../report/alspec_quality.rst",
            category="alspec",
            subcategory="quality",
        ),
        timing=report(
            f"{ALSPEC_OUT}/figures/timing.png",
            caption="../report/alspec_timing.rst",
            category="alspec",
            subcategory="timing",
        ),
        data=f"{ALSPEC_OUT}/figures/quality.csv",
    log:
        log_path("alspec", "figures"),
    benchmark:
        benchmark_path("alspec", "figures")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 15),
    params:
        lams=ALSPEC["lams"],
        extrapolate_to=ALSPEC["timing"]["extrapolate_to"],
    script:
        "../scripts/alspec/figures.py"


rule alspec_claims:
    input:
        tasks=alspec_task_metrics(),
        lm=rules.alspec_evaluate_lm.output.metrics,
        timing=rules.alspec_timing.output.timing,
        figures=alspec_figure_files(),
        declaration=f"{workflow.basedir}/src/methods/alspec/claims.yaml",
        code=script_code("alspec/claims.py"),
    output:
        claims=report(
            claims_path("alspec"),
            caption="../report/claims.rst",
            category="alspec",
            subcategory="claims",
        ),
        summary=f"{ALSPEC_OUT}/metrics_summary.json",
        metrics=f"{paper_dir('alspec')}/metrics.json",
    log:
        log_path("alspec", "claims"),
    benchmark:
        benchmark_path("alspec", "claims")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 15),
    params:
        scale=SCALE,
        lams=ALSPEC["lams"],
        extrapolate_to=ALSPEC["timing"]["extrapolate_to"],
    script:
        "../scripts/alspec/claims.py"


rule alspec:
    input:
        rules.alspec_claims.output.claims,
        alspec_figure_files(),
        rules.alspec_figures.output.data,
