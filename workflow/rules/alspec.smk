# ALSpec — Attention-Level Speculation
# Cai, Vora, Zhang, O'Connor, Jeffrey, ICML 2025 (PMLR 267:6291-6318).
#
# DAG:
#   alspec_train (small Llama on the synthetic tasks) ─> alspec_evaluate (per task: local, recall, copy) ─┐
#   lm_train / lm_tokenize (shared LM, workflow/rules/shared/lm.smk) ─> alspec_evaluate_lm ──────────────┤
#   alspec_train ─> alspec_timing (two workers vs one: tokens, latency vs hit rate, kernel times) ──────┴> alspec_figures, alspec_claims
#
# Config keys read: alspec.{seed, sink, window, lams, granularity, tasks, model, train, eval, lm, timing}
# (documented in config.yaml, schema in workflow/schemas/alspec.schema.yaml).


include: "helpers/alspec.smk"


wildcard_constraints:
    al_task="|".join(AL_TASKS),


rule alspec_train:
    input:
        kernels=kernels_built(),
        code=script_code("alspec/train.py"),
    output:
        config=f"{AL_OUT}/task_model/config.json",
        weights=f"{AL_OUT}/task_model/model.safetensors",
        info=f"{AL_OUT}/task_model/training.json",
    log:
        log_path("alspec", "train"),
    benchmark:
        benchmark_path("alspec", "train")
    threads: 1
    resources:
        mem_mb=at_scale(2000, 32000),
        runtime=at_scale(15, 600),
        gpu=at_scale(0, 1),
    params:
        tasks=AL["tasks"],
        model=AL["model"],
        train=AL["train"],
        sink=AL["sink"],
        window=AL["window"],
        seed=AL["seed"],
    script:
        "../scripts/alspec/train.py"


rule alspec_evaluate:
    input:
        config=rules.alspec_train.output.config,
        weights=rules.alspec_train.output.weights,
        kernels=kernels_built(),
        code=script_code("alspec/evaluate.py"),
    output:
        metrics=f"{AL_OUT}/metrics/{{al_task}}.json",
    log:
        log_path("alspec", "evaluate_{al_task}"),
    benchmark:
        benchmark_path("alspec", "evaluate_{al_task}")
    threads: 1
    resources:
        mem_mb=at_scale(2000, 32000),
        runtime=at_scale(15, 600),
        gpu=at_scale(0, 1),
    params:
        tasks=AL["tasks"],
        sink=AL["sink"],
        window=AL["window"],
        lams=AL["lams"],
        granularity=AL["granularity"],
        eval=AL["eval"],
        seed=AL["seed"],
    script:
        "../scripts/alspec/evaluate.py"


rule alspec_evaluate_lm:
    input:
        **lm_model_files(),
        tokens=lm_tokens(),
        kernels=kernels_built(),
        code=script_code("alspec/evaluate_lm.py"),
    output:
        metrics=f"{AL_OUT}/metrics/lm.json",
    log:
        log_path("alspec", "evaluate_lm"),
    benchmark:
        benchmark_path("alspec", "evaluate_lm")
    threads: 1
    resources:
        mem_mb=at_scale(2000, 80000),
        runtime=at_scale(15, 600),
        gpu=at_scale(0, 1),
    params:
        model_dir=input_dir("config"),
        sink=AL["sink"],
        window=AL["window"],
        lams=AL["lams"],
        granularity=AL["granularity"],
        lm=AL["lm"],
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
        timing=f"{AL_OUT}/timing.json",
    log:
        log_path("alspec", "timing"),
    benchmark:
        benchmark_path("alspec", "timing")
    threads: 2
    resources:
        mem_mb=at_scale(4000, 64000),
        runtime=at_scale(15, 120),
    params:
        tasks=AL["tasks"],
        sink=AL["sink"],
        window=AL["window"],
        timing=AL["timing"],
        seed=AL["seed"],
    script:
        "../scripts/alspec/timing.py"


rule alspec_figures:
    input:
        tasks=al_task_metrics(),
        lm=rules.alspec_evaluate_lm.output.metrics,
        timing=rules.alspec_timing.output.timing,
        code=script_code("alspec/figures.py"),
    output:
        quality=report(
            f"{AL_OUT}/figures/quality.png",
            caption="../report/alspec_quality.rst",
            category="alspec",
            subcategory="quality",
        ),
        timing=report(
            f"{AL_OUT}/figures/timing.png",
            caption="../report/alspec_timing.rst",
            category="alspec",
            subcategory="timing",
        ),
    log:
        log_path("alspec", "figures"),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        lams=AL["lams"],
        extrapolate_to=AL["timing"]["extrapolate_to"],
    script:
        "../scripts/alspec/figures.py"


rule alspec_claims:
    input:
        tasks=al_task_metrics(),
        lm=rules.alspec_evaluate_lm.output.metrics,
        timing=rules.alspec_timing.output.timing,
        figures=al_figures(),
        declaration=f"{workflow.basedir}/src/methods/alspec/claims.yaml",
        code=script_code("alspec/claims.py"),
    output:
        claims=report(
            claims_path("alspec"),
            caption="../report/claims.rst",
            category="alspec",
            subcategory="claims",
        ),
        summary=f"{AL_OUT}/metrics_summary.json",
    log:
        log_path("alspec", "claims"),
    benchmark:
        benchmark_path("alspec", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE,
        lams=AL["lams"],
        extrapolate_to=AL["timing"]["extrapolate_to"],
    script:
        "../scripts/alspec/claims.py"


rule alspec:
    input:
        rules.alspec_claims.output.claims,
        al_figures(),
