# Banyan: "Banyan: Improved Representation Learning with Explicit Structure", Opper & Siddharth, ICML 2025,
# arXiv 2407.17771. Entangled trees (one node per distinct subtree across the batch) with diagonal
# composition / decomposition (14 non-embedding parameters), trained from scratch by token reconstruction;
# ablations: no entanglement, dense composition, mean of embeddings; MiniLM as a pretrained reference.
#
# DAG:
#   lm_word_sim (shared) ─> banyan_data ─> banyan_train (variant: banyan, no_entangle, dense, mean) ─┐
#   lm_minilm (shared) ──────────────────> banyan_minilm ───────────────────────────────────────────┤
#                                                    banyan_figures <────────────────────────────────┤
#                                                    banyan_claims <─────────────────────────────────┘
#
# Config keys read: banyan.{seeds, data, model, train, eval} (documented in config.yaml, schema in
# workflow/schemas/banyan.schema.yaml).


include: "helpers/banyan.smk"


rule banyan_data:
    input:
        **by_word_inputs(),
        code=script_code("banyan/data.py"),
    output:
        data=f"{BY_OUT}/data/data.pt",
        stats=f"{BY_OUT}/data/stats.json",
    log:
        log_path("banyan", "data"),
    benchmark:
        benchmark_path("banyan", "data")
    threads: 1
    resources:
        mem_mb=at_scale(1000, 16000),
        runtime=at_scale(5, 120),
    params:
        data=BY["data"],
        word_sets=BY_WORD_SETS,
        seeds=BY["seeds"],
    script:
        "../scripts/banyan/data.py"


rule banyan_train:
    input:
        data=rules.banyan_data.output.data,
        code=script_code("banyan/train.py"),
    output:
        metrics=f"{BY_OUT}/train/{{variant,banyan|no_entangle|dense|mean}}.json",
        arrays=f"{BY_OUT}/train/{{variant,banyan|no_entangle|dense|mean}}.npz",
    log:
        log_path("banyan", "train_{variant}"),
    benchmark:
        benchmark_path("banyan", "train_{variant}")
    threads: 1
    resources:
        mem_mb=at_scale(1500, 32000),
        runtime=at_scale(10, 1440),
        gpu=at_scale(0, 1),
    params:
        model=BY["model"],
        train=BY["train"],
        seeds=BY["seeds"],
        min_word_pairs=BY["eval"]["min_word_pairs"],
    script:
        "../scripts/banyan/train.py"


rule banyan_minilm:
    input:
        **minilm_files(),
        data=rules.banyan_data.output.data,
        code=script_code("banyan/minilm.py"),
    output:
        metrics=f"{BY_OUT}/minilm/metrics.json",
    log:
        log_path("banyan", "minilm"),
    benchmark:
        benchmark_path("banyan", "minilm")
    threads: 1
    resources:
        mem_mb=at_scale(2000, 8000),
        runtime=at_scale(5, 60),
    params:
        model_dir=input_dir("config"),
        max_length=BY["eval"]["minilm_max_length"],
        min_word_pairs=BY["eval"]["min_word_pairs"],
        seeds=BY["seeds"],
    script:
        "../scripts/banyan/minilm.py"


rule banyan_figures:
    input:
        **{f"metrics_{v}": f for v, f in by_files("train", "json").items()},
        **{f"arrays_{v}": f for v, f in by_files("train", "npz").items()},
        minilm=rules.banyan_minilm.output.metrics,
        code=script_code("banyan/figures.py"),
    output:
        scores=report(
            f"{BY_OUT}/figures/scores.png",
            caption="../report/banyan_scores.rst",
            category="banyan",
            subcategory="similarity",
        ),
        curves=report(
            f"{BY_OUT}/figures/loss_curves.png",
            caption="../report/banyan_curves.rst",
            category="banyan",
            subcategory="training",
        ),
    log:
        log_path("banyan", "figures"),
    benchmark:
        benchmark_path("banyan", "figures")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        variants=BY_VARIANTS,
    script:
        "../scripts/banyan/figures.py"


rule banyan_claims:
    input:
        **{f"metrics_{v}": f for v, f in by_files("train", "json").items()},
        minilm=rules.banyan_minilm.output.metrics,
        figures=by_figures(),
        declaration=f"{workflow.basedir}/src/methods/banyan/claims.yaml",
        code=script_code("banyan/claims.py"),
    output:
        claims=report(
            claims_path("banyan"),
            caption="../report/claims.rst",
            category="banyan",
            subcategory="claims",
        ),
        summary=f"{BY_OUT}/metrics_summary.json",
    log:
        log_path("banyan", "claims"),
    benchmark:
        benchmark_path("banyan", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE,
        variants=BY_VARIANTS,
    script:
        "../scripts/banyan/claims.py"


rule banyan:
    input:
        rules.banyan_claims.output.claims,
        by_figures(),
