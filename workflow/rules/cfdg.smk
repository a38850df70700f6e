# CFDG: "Offline-to-Online Reinforcement Learning with Classifier-Free Diffusion Generation", Huang, Liu,
# Zhang, Yu, Li, ICML 2025, arXiv 2508.06806. One diffusion model over transitions labelled offline/online,
# classifier-free guidance, 8:2 online:offline generation, periodic retraining; augments IQL's batches.
# Baselines in the same DAG: plain IQL fine-tuning and SynthER-style unconditional augmentation.
#
# DAG:
#   cfdg_data ──> cfdg_quality (generated vs held-out online: MMD, C2ST, dynamics) ──┐
#             └─> cfdg_o2o (dataset: IQL / +SynthER / +CFDG, offline -> online) ─────┼─> cfdg_figures ─┐
#                                                                                    └─────────────────┴─> cfdg_claims
#
# Config keys read: cfdg.{env, seeds, reference, behaviour, datasets, quality, diffusion, iql, o2o} (documented in
# config.yaml, schema in workflow/schemas/cfdg.schema.yaml).


include: "helpers/cfdg.smk"


wildcard_constraints:
    cf_dataset="|".join(CF_O2O_DATASETS),


rule cfdg_data:
    input:
        code=script_code("cfdg/data.py"),
    output:
        **{f"offline_{n}": f for n, f in cf_offline_files().items()},
        online=f"{CF_OUT}/data/online.npz",
        reference=f"{CF_OUT}/data/reference.json",
    log:
        log_path("cfdg", "data"),
    benchmark:
        benchmark_path("cfdg", "data")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=at_scale(5, 60),
    params:
        env=CF["env"],
        datasets={n: CF["datasets"][n] for n in cf_offline_files()},
        online=CF["quality"]["online"],
        reference=CF["reference"],
        behaviour=CF.get("behaviour"),
        seed=CF["seeds"][0],
        out_dir=output_dir("online"),
    script:
        "../scripts/cfdg/data.py"


rule cfdg_quality:
    input:
        offline=f"{CF_OUT}/data/offline_{CF['quality']['offline']}.npz",
        online=rules.cfdg_data.output.online,
        code=script_code("cfdg/quality.py"),
    output:
        metrics=f"{CF_OUT}/quality/metrics.json",
        samples=f"{CF_OUT}/quality/samples.npz",
    log:
        log_path("cfdg", "quality"),
    benchmark:
        benchmark_path("cfdg", "quality")
    threads: 1
    resources:
        mem_mb=2000,
        runtime=at_scale(10, 600),
    params:
        env=CF["env"],
        seeds=CF["seeds"],
        diffusion=CF["diffusion"],
        quality=CF["quality"],
    script:
        "../scripts/cfdg/quality.py"


rule cfdg_o2o:
    input:
        offline=f"{CF_OUT}/data/offline_{{cf_dataset}}.npz",
        reference=rules.cfdg_data.output.reference,
        code=script_code("cfdg/o2o.py"),
    output:
        metrics=f"{CF_OUT}/o2o/{{cf_dataset}}.json",
        curves=f"{CF_OUT}/o2o/{{cf_dataset}}.npz",
    log:
        log_path("cfdg", "o2o_{cf_dataset}"),
    benchmark:
        benchmark_path("cfdg", "o2o_{cf_dataset}")
    threads: 1
    resources:
        mem_mb=2000,
        runtime=at_scale(15, 1440),
    params:
        env=CF["env"],
        seeds=CF["seeds"],
        iql=CF["iql"],
        diffusion=CF["diffusion"],
        o2o=CF["o2o"],
    script:
        "../scripts/cfdg/o2o.py"


rule cfdg_figures:
    input:
        **{f"o2o_{n}": f for n, f in cf_o2o_files("npz").items()},
        quality=rules.cfdg_quality.output.samples,
        code=script_code("cfdg/figures.py"),
    output:
        returns=report(
            f"{CF_OUT}/figures/returns.png",
            caption="../report/cfdg_returns.rst",
            category="cfdg",
            subcategory="offline-to-online returns",
        ),
        projection=report(
            f"{CF_OUT}/figures/projection.png",
            caption="../report/cfdg_projection.rst",
            category="cfdg",
            subcategory="generated transitions",
        ),
    log:
        log_path("cfdg", "figures"),
    benchmark:
        benchmark_path("cfdg", "figures")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        datasets=CF_O2O_DATASETS,
    script:
        "../scripts/cfdg/figures.py"


rule cfdg_claims:
    input:
        **{f"o2o_{n}": f for n, f in cf_o2o_files("json").items()},
        quality=rules.cfdg_quality.output.metrics,
        figures=cf_figures(),
        declaration=f"{workflow.basedir}/src/methods/cfdg/claims.yaml",
        code=script_code("cfdg/claims.py"),
    output:
        claims=report(
            claims_path("cfdg"),
            caption="../report/claims.rst",
            category="cfdg",
            subcategory="claims",
        ),
        summary=f"{CF_OUT}/metrics_summary.json",
    log:
        log_path("cfdg", "claims"),
    benchmark:
        benchmark_path("cfdg", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE,
        datasets=CF_O2O_DATASETS,
    script:
        "../scripts/cfdg/claims.py"


rule cfdg:
    input:
        rules.cfdg_claims.output.claims,
        cf_figures(),
