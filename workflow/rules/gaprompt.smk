# GAPrompt: "GAPrompt: Geometry-Aware Point Cloud Prompt for 3D Vision Model", Ai, Liu, Lei, Cui, Zou,
# Zhou, ICML 2025, arXiv 2505.04119. A Point-MAE backbone pre-trained by masked point reconstruction,
# frozen, then adapted by a linear probe, VPT-deep prompts, adapters, GAPrompt (Point Prompt, Point
# Shift Prompter, Prompt Propagation) and full fine-tuning on a perturbed shape-classification task.
#
# DAG:
#   gaprompt_download (PyGSP wheel: the bunny) ─> gaprompt_data ─> gaprompt_pretrain ─> gaprompt_adapt (method x seed group)
#        │                                   ├─> gaprompt_figures ─┐
#        └──────────────────────────────────>┴─> gaprompt_claims <─┘
#
# Seed groups ({seeds}): one job over all seeds at tiny and smoke scale (`all`), one job per seed at paper scale
# (`seed0`, ...). Paper scale (config/full.yaml) needs ScanObjectNN's h5 files (licence form) and Point-MAE's
# pretrain.pth: the dry run names both when they are missing.
#
# Config keys read: gaprompt.{seeds, methods, data, backbone, pretrain, adapt, paper_arch} (documented
# in config.yaml, schema in workflow/schemas/gaprompt.schema.yaml).


include: "helpers/gaprompt.smk"


rule gaprompt_download:
    input:
        code=script_code("common/download_pypi.py"),
    output:
        wheel=GAPROMPT_BUNNY,
    log:
        log_path("gaprompt", "download"),
    benchmark:
        benchmark_path("gaprompt", "download")
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(1000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(10),
    params:
        package="pygsp",
        version=GAPROMPT["data"]["bunny"]["version"],
        sha256=GAPROMPT["data"]["bunny"]["sha256"],
    script:
        "../scripts/common/download_pypi.py"


# Paper scale: reads ScanObjectNN's two h5 files (about 11.4k + 2.9k clouds of 2048 points): minutes, a few GB.
rule gaprompt_data:
    input:
        unpack(gaprompt_bunny_input),
        unpack(gaprompt_dataset_files),
        code=script_code("gaprompt/data.py"),
    output:
        clouds=f"{GAPROMPT_OUT}/data/clouds.npz",
        info=f"{GAPROMPT_OUT}/data/info.json",
    log:
        log_path("gaprompt", "data"),
    benchmark:
        benchmark_path("gaprompt", "data")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 8000),
        runtime=runtime_per_attempt(5, 30),
    params:
        data=GAPROMPT["data"],
        pins=input_pins,
    script:
        "../scripts/gaprompt/data.py"


# Paper scale loads Point-MAE's released checkpoint (no GPU, one thread); without a checkpoint it pre-trains
# on the job's device (GAPROMPT_PRETRAIN_GPU / _THREADS in the helper file).
rule gaprompt_pretrain:
    input:
        unpack(gaprompt_checkpoint),
        clouds=rules.gaprompt_data.output.clouds,
        code=script_code("gaprompt/pretrain.py"),
    output:
        ckpt=f"{GAPROMPT_OUT}/pretrain/backbone.pt",
        metrics=f"{GAPROMPT_OUT}/pretrain/metrics.json",
    log:
        log_path("gaprompt", "pretrain"),
    benchmark:
        benchmark_path("gaprompt", "pretrain")
    threads: at_scale(1, GAPROMPT_PRETRAIN_THREADS)
    resources:
        mem_mb=per_attempt(1500, 8000),
        runtime=runtime_per_attempt(10, 60),
        gpu=at_scale(0, GAPROMPT_PRETRAIN_GPU),
    params:
        backbone=GAPROMPT["backbone"],
        pretrain=GAPROMPT["pretrain"],
    script:
        "../scripts/gaprompt/pretrain.py"


# Paper scale, one method and one seed per job on one GPU: ScanObjectNN PB_T50_RS (11,416 training clouds,
# batch 32: 356 steps per epoch), 301 epochs of Point-MAE ViT-S with the method's modules and evaluation on
# 2,882 test clouds; estimated at a few hours per job on a current GPU (the farthest-point sampling here is a
# Python loop of 128 steps per grouping), so 24 h leaves a margin for full fine-tuning and slower cards.
rule gaprompt_adapt:
    input:
        clouds=rules.gaprompt_data.output.clouds,
        ckpt=rules.gaprompt_pretrain.output.ckpt,
        code=script_code("gaprompt/adapt.py"),
    output:
        metrics=f"{GAPROMPT_OUT}/adapt/{{method,linear|untrained|vpt|adapter|gaprompt|full}}_{{seeds}}.json",
        arrays=f"{GAPROMPT_OUT}/adapt/{{method,linear|untrained|vpt|adapter|gaprompt|full}}_{{seeds}}.npz",
    log:
        log_path("gaprompt", "adapt_{method}_{seeds}"),
    benchmark:
        benchmark_path("gaprompt", "adapt_{method}_{seeds}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(1500, 16000),
        runtime=runtime_per_attempt(10, 1440),
        gpu=at_scale(0, 1),
    params:
        backbone=GAPROMPT["backbone"],
        adapt=GAPROMPT["adapt"],
        seeds=lambda wc: group_seeds(wc.seeds, GAPROMPT["seeds"]),
        paper_arch=GAPROMPT["paper_arch"],
    script:
        "../scripts/gaprompt/adapt.py"


rule gaprompt_figures:
    input:
        **gaprompt_adapt_inputs(),
        # the shift prompter's examples: GAPrompt's run of the first seed (first seed group)
        shift=gaprompt_adapt_files("gaprompt", "npz")[0],
        info=rules.gaprompt_data.output.info,
        code=script_code("gaprompt/figures.py"),
    output:
        accuracy=report(
            f"{GAPROMPT_OUT}/figures/accuracy_vs_params.png",
            caption="../report/gaprompt_accuracy.rst",
            category="gaprompt",
            subcategory="accuracy vs parameters",
        ),
        accuracy_data=f"{GAPROMPT_OUT}/figures/accuracy_vs_params.csv",
        shift=report(
            f"{GAPROMPT_OUT}/figures/shift_prompter.png",
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
        mem_mb=per_attempt(1000),
        runtime=runtime_per_attempt(5),
    params:
        methods=GAPROMPT_METHODS,
    script:
        "../scripts/gaprompt/figures.py"


rule gaprompt_claims:
    input:
        **gaprompt_adapt_inputs(),
        figures=gaprompt_figures(),
        declaration=f"{workflow.basedir}/src/methods/gaprompt/claims.yaml",
        code=script_code("gaprompt/claims.py"),
    output:
        claims=report(
            claims_path("gaprompt"),
            caption="../report/claims.rst",
            category="gaprompt",
            subcategory="claims",
        ),
        metrics=f"{paper_dir('gaprompt')}/metrics.json",
        summary=f"{GAPROMPT_OUT}/metrics_summary.json",
    log:
        log_path("gaprompt", "claims"),
    benchmark:
        benchmark_path("gaprompt", "claims")
    threads: 1
    resources:
        mem_mb=per_attempt(1000),
        runtime=runtime_per_attempt(5),
    params:
        scale=SCALE,
        methods=GAPROMPT_METHODS,
    script:
        "../scripts/gaprompt/claims.py"


rule gaprompt:
    input:
        rules.gaprompt_claims.output.claims,
        gaprompt_figures(),
