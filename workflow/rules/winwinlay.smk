# WinWinLay: "Control and Realism: Best of Both Worlds in Layout-to-Image without Training", Li, Hu,
# Liu, Wang, ICML 2025, arXiv 2506.15563. Training-free layout control of a cross-attention diffusion
# model: the common attention energy (Layout-Guidance / BoxDiff) vs the non-local energy (+ KL to a box
# prior), plain gradient updates vs the adaptive Langevin update.
#
# DAG:
#   winwinlay_toy (experiment 1: attention maps optimised directly) ────────────────┐
#   winwinlay_train (denoiser + detector + PCA) ─> winwinlay_guide (seed) ─┬─> winwinlay_figures
#                                                                          └─> winwinlay_claims
#   winwinlay_sd (seed): full scale only, Stable Diffusion on the configured layouts
#
# Config keys read: winwinlay.{seeds, toy, data, model, detector, sampling, boxdiff, methods, sd} (documented in
# config.yaml, schema in workflow/schemas/winwinlay.schema.yaml).


include: "helpers/winwinlay.smk"


rule winwinlay_toy:
    input:
        code=script_code("winwinlay/toy.py"),
    output:
        metrics=f"{WWL_OUT}/toy/metrics.json",
        arrays=f"{WWL_OUT}/toy/maps.npz",
    log:
        log_path("winwinlay", "toy"),
    benchmark:
        benchmark_path("winwinlay", "toy")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=at_scale(5, 30),
    params:
        seeds=WWL_SEEDS,
        toy={**WWL["toy"], "boxdiff": WWL["boxdiff"]},
    script:
        "../scripts/winwinlay/toy.py"


rule winwinlay_train:
    input:
        code=script_code("winwinlay/train.py"),
    output:
        ckpt=f"{WWL_OUT}/model/denoiser.pt",
        metrics=f"{WWL_OUT}/model/train.json",
    log:
        log_path("winwinlay", "train"),
    benchmark:
        benchmark_path("winwinlay", "train")
    threads: 1
    resources:
        mem_mb=1500,
        runtime=at_scale(10, 240),
    params:
        data=WWL["data"],
        model=WWL["model"],
        detector=WWL["detector"],
        seed=WWL["model_seed"],
    script:
        "../scripts/winwinlay/train.py"


rule winwinlay_guide:
    input:
        ckpt=rules.winwinlay_train.output.ckpt,
        code=script_code("winwinlay/guide.py"),
    output:
        metrics=f"{WWL_OUT}/guide/seed{{seed}}.json",
        arrays=f"{WWL_OUT}/guide/seed{{seed}}.npz",
    log:
        log_path("winwinlay", "guide_seed{seed}"),
    benchmark:
        benchmark_path("winwinlay", "guide_seed{seed}")
    wildcard_constraints:
        seed=r"\d+",
    threads: 1
    resources:
        mem_mb=1500,
        runtime=at_scale(10, 240),
    params:
        data=WWL["data"],
        sampling={**WWL["sampling"], "boxdiff": WWL["boxdiff"]},
        methods=WWL_METHODS,
    script:
        "../scripts/winwinlay/guide.py"


rule winwinlay_figures:
    input:
        toy=rules.winwinlay_toy.output.arrays,
        guide_npz=wwl_guide_files("npz"),
        guide_json=wwl_guide_files("json"),
        code=script_code("winwinlay/figures.py"),
    output:
        toy=report(
            f"{WWL_OUT}/figures/toy_maps.png",
            caption="../report/winwinlay_toy.rst",
            category="winwinlay",
            subcategory="attention energies",
        ),
        samples=report(
            f"{WWL_OUT}/figures/samples.png",
            caption="../report/winwinlay_samples.rst",
            category="winwinlay",
            subcategory="guided sampling",
        ),
        tradeoff=report(
            f"{WWL_OUT}/figures/tradeoff.png",
            caption="../report/winwinlay_tradeoff.rst",
            category="winwinlay",
            subcategory="guided sampling",
        ),
    log:
        log_path("winwinlay", "figures"),
    benchmark:
        benchmark_path("winwinlay", "figures")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        methods=list(WWL_METHODS),
    script:
        "../scripts/winwinlay/figures.py"


rule winwinlay_claims:
    input:
        toy=rules.winwinlay_toy.output.metrics,
        train=rules.winwinlay_train.output.metrics,
        guide=wwl_guide_files("json"),
        figures=wwl_figures(),
        declaration=f"{workflow.basedir}/src/methods/winwinlay/claims.yaml",
        code=script_code("winwinlay/claims.py"),
    output:
        claims=report(
            claims_path("winwinlay"),
            caption="../report/claims.rst",
            category="winwinlay",
            subcategory="claims",
        ),
        summary=f"{WWL_OUT}/metrics_summary.json",
    log:
        log_path("winwinlay", "claims"),
    benchmark:
        benchmark_path("winwinlay", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE,
    script:
        "../scripts/winwinlay/claims.py"


# Full scale only (winwinlay.sd set, config/full.yaml): Stable Diffusion through diffusers, the same guided
# loop and energies; per seed every method on every configured layout.
rule winwinlay_sd:
    input:
        code=script_code("winwinlay/sd.py"),
    output:
        metrics=f"{WWL_OUT}/sd/seed{{seed}}.json",
        arrays=f"{WWL_OUT}/sd/seed{{seed}}.npz",
    log:
        log_path("winwinlay", "sd_seed{seed}"),
    benchmark:
        benchmark_path("winwinlay", "sd_seed{seed}")
    wildcard_constraints:
        seed=r"\d+",
    threads: 4
    resources:
        mem_mb=at_scale(4000, 32000),
        runtime=at_scale(10, 600),
        gpu=at_scale(0, 1),
    params:
        sd=WWL["sd"],
        sampling={**WWL["sampling"], "boxdiff": WWL["boxdiff"]},
        methods=WWL_METHODS,
    script:
        "../scripts/winwinlay/sd.py"


rule winwinlay:
    input:
        rules.winwinlay_claims.output.claims,
        wwl_figures(),
        wwl_sd_files(),
