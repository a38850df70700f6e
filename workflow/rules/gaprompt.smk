# GAPrompt: "GAPrompt: Geometry-Aware Point Cloud Prompt for 3D Vision Model", Ai, Liu, Lei, Cui, Zou,
# Zhou, ICML 2025, arXiv 2505.04119. A Point-MAE backbone pre-trained by masked point reconstruction,
# frozen, then adapted by a linear probe, VPT-deep prompts, adapters, GAPrompt (Point Prompt, Point
# Shift Prompter, Prompt Propagation) and full fine-tuning on a perturbed shape-classification task.
#
# DAG:
#   gaprompt_download (PyGSP wheel: the bunny) ─> gaprompt_data ─> gaprompt_pretrain ─> gaprompt_adapt (method: linear, vpt, adapter, gaprompt, full)
#        │                                   ├─> gaprompt_figures ─┐
#        └──────────────────────────────────>┴─> gaprompt_claims <─┘
#
# Config keys read: gaprompt.{seeds, methods, data, backbone, pretrain, adapt, paper_arch} (documented
# in config.yaml, schema in workflow/schemas/gaprompt.schema.yaml).


include: "helpers/gaprompt.smk"


rule gaprompt_download:
    input:
        code=script_code("common/download_pypi.py"),
    output:
        wheel=GA_BUNNY,
    log:
        log_path("gaprompt", "download"),
    benchmark:
        benchmark_path("gaprompt", "download")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        package="pygsp",
        version=GA["data"]["bunny"]["version"],
        sha256=GA["data"]["bunny"]["sha256"],
    script:
        "../scripts/common/download_pypi.py"


rule gaprompt_data:
    input:
        unpack(ga_bunny_input),
        code=script_code("gaprompt/data.py"),
    output:
        clouds=f"{GA_OUT}/data/clouds.npz",
        info=f"{GA_OUT}/data/info.json",
    log:
        log_path("gaprompt", "data"),
    benchmark:
        benchmark_path("gaprompt", "data")
    threads: 1
    resources:
        mem_mb=at_scale(1000, 16000),
        runtime=at_scale(5, 60),
    params:
        data=GA["data"],
        pins=input_pins,
    script:
        "../scripts/gaprompt/data.py"


rule gaprompt_pretrain:
    input:
        clouds=rules.gaprompt_data.output.clouds,
        code=script_code("gaprompt/pretrain.py"),
    output:
        ckpt=f"{GA_OUT}/pretrain/backbone.pt",
        metrics=f"{GA_OUT}/pretrain/metrics.json",
    log:
        log_path("gaprompt", "pretrain"),
    benchmark:
        benchmark_path("gaprompt", "pretrain")
    threads: 1
    resources:
        mem_mb=at_scale(1500, 16000),
        runtime=at_scale(10, 60),
    params:
        backbone=GA["backbone"],
        pretrain=GA["pretrain"],
    script:
        "../scripts/gaprompt/pretrain.py"


rule gaprompt_adapt:
    input:
        clouds=rules.gaprompt_data.output.clouds,
        ckpt=rules.gaprompt_pretrain.output.ckpt,
        code=script_code("gaprompt/adapt.py"),
    output:
        metrics=f"{GA_OUT}/adapt/{{method,linear|vpt|adapter|gaprompt|full}}.json",
        arrays=f"{GA_OUT}/adapt/{{method,linear|vpt|adapter|gaprompt|full}}.npz",
    log:
        log_path("gaprompt", "adapt_{method}"),
    benchmark:
        benchmark_path("gaprompt", "adapt_{method}")
    threads: 1
    resources:
        mem_mb=at_scale(1500, 32000),
        runtime=at_scale(10, 1440),
    params:
        backbone=GA["backbone"],
        adapt=GA["adapt"],
        seeds=GA["seeds"],
        paper_arch=GA["paper_arch"],
    script:
        "../scripts/gaprompt/adapt.py"


rule gaprompt_figures:
    input:
        **{f"adapt_{m}": f for m, f in ga_method_files("json").items()},
        shift=f"{GA_OUT}/adapt/gaprompt.npz",
        info=rules.gaprompt_data.output.info,
        code=script_code("gaprompt/figures.py"),
    output:
        accuracy=report(
            f"{GA_OUT}/figures/accuracy_vs_params.png",
            caption="../report/gaprompt_accuracy.rst",
            category="gaprompt",
            subcategory="accuracy vs parameters",
        ),
        shift=report(
            f"{GA_OUT}/figures/shift_prompter.png",
            caption="../report/gaprompt_shift.rst",
            category="gaprompt",
            subcategory="point shift prompter",
        ),
    log:
        log_path("gaprompt", "figures"),
    benchmark:
        benchmark_path("gaprompt", "figures")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        methods=GA_METHODS,
    script:
        "../scripts/gaprompt/figures.py"


rule gaprompt_claims:
    input:
        **{f"adapt_{m}": f for m, f in ga_method_files("json").items()},
        figures=ga_figures(),
        declaration=f"{workflow.basedir}/src/methods/gaprompt/claims.yaml",
        code=script_code("gaprompt/claims.py"),
    output:
        claims=report(
            claims_path("gaprompt"),
            caption="../report/claims.rst",
            category="gaprompt",
            subcategory="claims",
        ),
        summary=f"{GA_OUT}/metrics_summary.json",
    log:
        log_path("gaprompt", "claims"),
    benchmark:
        benchmark_path("gaprompt", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE,
        methods=GA_METHODS,
    script:
        "../scripts/gaprompt/claims.py"


rule gaprompt:
    input:
        rules.gaprompt_claims.output.claims,
        ga_figures(),
