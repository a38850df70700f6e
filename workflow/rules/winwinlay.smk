# WinWinLay: "Control and Realism: Best of Both Worlds in Layout-to-Image without Training", Li, Hu,
# Liu, Wang, ICML 2025, arXiv 2506.15563. Training-free layout control of a cross-attention diffusion
# model: the common attention energy (Layout-Guidance / BoxDiff) vs the non-local energy (+ KL to a box
# prior), plain gradient updates vs the adaptive Langevin update.
#
# DAG:
#   winwinlay_toy (experiment 1: attention maps optimised directly) ────────────────┐
#   winwinlay_train (denoiser + detector + PCA) ─> winwinlay_guide (seed) ─┬─> winwinlay_figures
#                                                                          └─> winwinlay_claims
#   winwinlay_sd_download (submit host) ─> winwinlay_sd (seed): full scale only, Stable Diffusion on the
#                                          configured layouts
#
# Seeds: winwinlay_guide and winwinlay_sd run one job per seed at every scale. winwinlay_toy keeps its seeds in
# one job: a seed only indexes the toy's random boxes and initial maps, and the whole step takes minutes on the
# CPU at paper scale too.
#
# Config keys read: winwinlay.{seeds, toy, data, model, detector, sampling, boxdiff, methods, sd} (documented in
# config.yaml, schema in workflow/schemas/winwinlay.schema.yaml).


include: "helpers/winwinlay.smk"


# Optimises maps of a 16x16 grid with torch on the CPU (no network): 200 maps x 1000 steps x 6 energy and
# parameterisation pairs per seed at paper scale.
rule winwinlay_toy:
    input:
        code=script_code("winwinlay/toy.py"),
    output:
        metrics=f"{WINWINLAY_OUT}/toy/metrics.json",
        arrays=f"{WINWINLAY_OUT}/toy/maps.npz",
    log:
        log_path("winwinlay", "toy"),
    benchmark:
        benchmark_path("winwinlay", "toy")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(1000, 4000),
        runtime=runtime_per_attempt(5, 120),
    params:
        seeds=WINWINLAY_SEEDS,
        toy={**WINWINLAY["toy"], "boxdiff": WINWINLAY["boxdiff"]},
    script:
        "../scripts/winwinlay/toy.py"


# Paper scale: 20,000 AdamW steps of the denoiser (batch 128) on the GPU, then the detector (scikit-learn
# logistic regression on ~21k windows) and the PCA on the CPU: well under an hour.
rule winwinlay_train:
    input:
        code=script_code("winwinlay/train.py"),
    output:
        ckpt=f"{WINWINLAY_OUT}/model/denoiser.pt",
        metrics=f"{WINWINLAY_OUT}/model/train.json",
    log:
        log_path("winwinlay", "train"),
    benchmark:
        benchmark_path("winwinlay", "train")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(1500, 8000),
        runtime=runtime_per_attempt(10, 120),
        gpu=at_scale(0, 1),
    params:
        data=WINWINLAY["data"],
        model=WINWINLAY["model"],
        detector=WINWINLAY["detector"],
        seed=WINWINLAY["model_seed"],
    script:
        "../scripts/winwinlay/train.py"


# Paper scale, one seed per job: 1,000 layouts x 6 methods x 50 DDIM steps of the denoiser on the GPU (guided
# steps with up to 5 inner updates; BoxDiff's refinement), then the detector and the PCA features on the CPU.
rule winwinlay_guide:
    input:
        ckpt=rules.winwinlay_train.output.ckpt,
        code=script_code("winwinlay/guide.py"),
    output:
        metrics=f"{WINWINLAY_OUT}/guide/seed{{seed}}.json",
        arrays=f"{WINWINLAY_OUT}/guide/seed{{seed}}.npz",
    log:
        log_path("winwinlay", "guide_seed{seed}"),
    benchmark:
        benchmark_path("winwinlay", "guide_seed{seed}")
    wildcard_constraints:
        seed=r"\d+",
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(1500, 8000),
        runtime=runtime_per_attempt(10, 120),
        gpu=at_scale(0, 1),
    params:
        data=WINWINLAY["data"],
        sampling={**WINWINLAY["sampling"], "boxdiff": WINWINLAY["boxdiff"]},
        methods=WINWINLAY_METHODS,
    script:
        "../scripts/winwinlay/guide.py"


rule winwinlay_figures:
    input:
        toy=rules.winwinlay_toy.output.arrays,
        guide_npz=winwinlay_guide_files("npz"),
        guide_json=winwinlay_guide_files("json"),
        code=script_code("winwinlay/figures.py"),
    output:
        toy=report(
            f"{WINWINLAY_OUT}/figures/toy_maps.png",
            caption="../report/winwinlay_toy.rst",
            category="winwinlay",
            subcategory="attention energies",
        ),
        samples=report(
            f"{WINWINLAY_OUT}/figures/samples.png",
            caption="../report/winwinlay_samples.rst",
            category="winwinlay",
            subcategory="guided sampling",
        ),
        tradeoff=report(
            f"{WINWINLAY_OUT}/figures/tradeoff.png",
            caption="../report/winwinlay_tradeoff.rst",
            category="winwinlay",
            subcategory="guided sampling",
        ),
        tradeoff_data=f"{WINWINLAY_OUT}/figures/tradeoff.csv",
    log:
        log_path("winwinlay", "figures"),
    benchmark:
        benchmark_path("winwinlay", "figures")
    threads: 1
    resources:
        mem_mb=per_attempt(1000),
        runtime=runtime_per_attempt(5),
    params:
        methods=list(WINWINLAY_METHODS),
    script:
        "../scripts/winwinlay/figures.py"


rule winwinlay_claims:
    input:
        toy=rules.winwinlay_toy.output.metrics,
        train=rules.winwinlay_train.output.metrics,
        guide=winwinlay_guide_files("json"),
        figures=winwinlay_figures(),
        declaration=f"{workflow.basedir}/src/methods/winwinlay/claims.yaml",
        code=script_code("winwinlay/claims.py"),
    output:
        claims=report(
            claims_path("winwinlay"),
            caption="../report/claims.rst",
            category="winwinlay",
            subcategory="claims",
        ),
        metrics=f"{paper_dir('winwinlay')}/metrics.json",
        summary=f"{WINWINLAY_OUT}/metrics_summary.json",
    log:
        log_path("winwinlay", "claims"),
    benchmark:
        benchmark_path("winwinlay", "claims")
    threads: 1
    resources:
        mem_mb=per_attempt(1000),
        runtime=runtime_per_attempt(5),
    params:
        scale=SCALE,
    script:
        "../scripts/winwinlay/claims.py"


# Full scale only: the pipeline's weights (about 2 GB in fp16) fetched on the submit host, where the internet is.
rule winwinlay_sd_download:
    input:
        unpack(winwinlay_sd_token),
        code=script_code("winwinlay/sd_download.py"),
    output:
        weights=directory(WINWINLAY_SD_DOWNLOAD),
    log:
        log_path("winwinlay", "sd_download"),
    benchmark:
        benchmark_path("winwinlay", "sd_download")
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(2000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(60),
    params:
        model_id=WINWINLAY_SD["model_id"] if WINWINLAY_SD else None,
        revision=WINWINLAY_SD.get("revision") if WINWINLAY_SD else None,
        variant=WINWINLAY_SD.get("variant") if WINWINLAY_SD else None,
    script:
        "../scripts/winwinlay/sd_download.py"


# Full scale only (winwinlay.sd set, config/full.yaml): Stable Diffusion through diffusers, the same guided loop
# and energies; per seed every method on every configured layout: 6 layouts x 6 methods, 50 DDIM steps each
# with classifier-free guidance and up to 10 x 5 (Layout-Guidance) or 25 + refinement (BoxDiff) backward passes
# through the UNet at 512 x 512 in fp16, estimated at well under an hour per seed on one GPU.
rule winwinlay_sd:
    input:
        weights=WINWINLAY_SD_WEIGHTS,
        code=script_code("winwinlay/sd.py"),
    output:
        metrics=f"{WINWINLAY_OUT}/sd/seed{{seed}}.json",
        arrays=f"{WINWINLAY_OUT}/sd/seed{{seed}}.npz",
    log:
        log_path("winwinlay", "sd_seed{seed}"),
    benchmark:
        benchmark_path("winwinlay", "sd_seed{seed}")
    wildcard_constraints:
        seed=r"\d+",
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(4000, 16000),
        runtime=runtime_per_attempt(10, 180),
        gpu=at_scale(0, 1),
    params:
        sd=WINWINLAY_SD,
        sampling={**WINWINLAY["sampling"], "boxdiff": WINWINLAY["boxdiff"]},
        methods=WINWINLAY_METHODS,
    script:
        "../scripts/winwinlay/sd.py"


rule winwinlay:
    input:
        rules.winwinlay_claims.output.claims,
        winwinlay_figures(),
        winwinlay_sd_files(),
