# Banyan: "Banyan: Improved Representation Learning with Explicit Structure", Opper & Siddharth, ICML 2025,
# arXiv 2407.17771. Entangled trees (one node per distinct subtree across the batch) with diagonal
# composition / decomposition (14 non-embedding parameters), trained from scratch by token reconstruction;
# ablations: no entanglement, dense composition, mean of embeddings; MiniLM as a pretrained reference.
#
# DAG:
#   (paper scale) banyan_download ─┐
#   lm_word_sim (shared) ──────────┴> banyan_data ─> banyan_train (variant x seed group) ─┐
#   lm_minilm (shared) ──────────────────────────> banyan_minilm ─────────────────────────┤
#                                                    banyan_figures <─────────────────────┤
#                                                    banyan_claims <──────────────────────┘
#
# Paper-scale cost (config/full.yaml: the official English corpus, E = 256, batch 512, 15 epochs), estimated
# for one GPU: the greedy merge runs one vectorised step per tree level (up to 200 for the longest sentence
# of a batch), ~0.2-0.5 s per batch with its backward pass; 15 epochs of a corpus of up to 2M sentences are
# <= 60k batches -> <= 8 h per variant and seed, within one job.
#
# Config keys read: banyan.{seeds, data, model, train, eval} (documented in config.yaml, schema in
# workflow/schemas/banyan.schema.yaml).


include: "helpers/banyan.smk"


# Paper scale only: the corpus and the STS sets fetched on the submit host (compute nodes often have no
# internet) into a Hugging Face cache inside resources/, which banyan_data reads offline.
rule banyan_download:
    input:
        code=script_code("banyan/download.py"),
    output:
        manifest=f"{RESOURCES}/banyan/hf.json",
    log:
        log_path("banyan", "download"),
    benchmark:
        benchmark_path("banyan", "download")
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(3000, 3000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(30, 240),
    params:
        data=BANYAN["data"],
        cache_dir=lambda wc, output: os.path.splitext(output.manifest)[0],
    script:
        "../scripts/banyan/download.py"


# One draw per seed of the grammar at tiny scale (a cheap step, so the seeds stay inside it); one corpus
# for all seeds at paper scale.
rule banyan_data:
    input:
        **banyan_word_inputs(),
        prefetched=banyan_download_input,
        code=script_code("banyan/data.py"),
    output:
        data=f"{BANYAN_OUT}/data/data.pt",
        stats=f"{BANYAN_OUT}/data/stats.json",
    log:
        log_path("banyan", "data"),
    benchmark:
        benchmark_path("banyan", "data")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 32000),
        runtime=runtime_per_attempt(5, 240),
    params:
        data=BANYAN["data"],
        word_sets=BANYAN_WORD_SETS,
        seeds=BANYAN["seeds"],
        cache_dir=BANYAN_HF_CACHE,
    script:
        "../scripts/banyan/data.py"


# GPU at paper scale (the official code trains on one); 4 CPU threads for the host side of the batches.
rule banyan_train:
    input:
        data=rules.banyan_data.output.data,
        code=script_code("banyan/train.py"),
    output:
        metrics=f"{BANYAN_OUT}/train/{{variant,banyan|no_entangle|dense|mean}}_{{seeds}}.json",
        arrays=f"{BANYAN_OUT}/train/{{variant,banyan|no_entangle|dense|mean}}_{{seeds}}.npz",
    log:
        log_path("banyan", "train_{variant}_{seeds}"),
    benchmark:
        benchmark_path("banyan", "train_{variant}_{seeds}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(1500, 32000),
        runtime=runtime_per_attempt(10, 720),
        gpu=at_scale(0, 1),
    params:
        model=BANYAN["model"],
        train=BANYAN["train"],
        seeds=lambda wc: group_seeds(wc.seeds, BANYAN["seeds"]),
        min_word_pairs=BANYAN["eval"]["min_word_pairs"],
    script:
        "../scripts/banyan/train.py"


# Inference of a pretrained network, scored on each seed's draw: one short job for all seeds (at paper
# scale the seeds share one corpus and the same STS sets).
rule banyan_minilm:
    input:
        **minilm_files(),
        data=rules.banyan_data.output.data,
        code=script_code("banyan/minilm.py"),
    output:
        metrics=f"{BANYAN_OUT}/minilm/metrics.json",
    log:
        log_path("banyan", "minilm"),
    benchmark:
        benchmark_path("banyan", "minilm")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(2000, 16000),
        runtime=runtime_per_attempt(5, 60),
        gpu=at_scale(0, 1),
    params:
        model_dir=input_dir("config"),
        max_length=BANYAN["eval"]["minilm_max_length"],
        min_word_pairs=BANYAN["eval"]["min_word_pairs"],
        seeds=BANYAN["seeds"],
    script:
        "../scripts/banyan/minilm.py"


rule banyan_figures:
    input:
        **banyan_train_inputs("json"),
        **banyan_train_inputs("npz"),
        minilm=rules.banyan_minilm.output.metrics,
        code=script_code("banyan/figures.py"),
    output:
        scores=report(
            f"{BANYAN_OUT}/figures/scores.png",
            caption="../report/banyan_scores.rst",
            category="banyan",
            subcategory="similarity",
        ),
        scores_data=f"{BANYAN_OUT}/figures/scores.csv",
        curves=report(
            f"{BANYAN_OUT}/figures/loss_curves.png",
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
        mem_mb=per_attempt(1000, 4000),
        runtime=runtime_per_attempt(5, 10),
    params:
        variants=BANYAN_VARIANTS,
    script:
        "../scripts/banyan/figures.py"


rule banyan_claims:
    input:
        **banyan_train_inputs("json"),
        minilm=rules.banyan_minilm.output.metrics,
        figures=banyan_figures(),
        declaration=f"{workflow.basedir}/src/methods/banyan/claims.yaml",
        code=script_code("banyan/claims.py"),
    output:
        claims=report(
            claims_path("banyan"),
            caption="../report/claims.rst",
            category="banyan",
            subcategory="claims",
        ),
        metrics=f"{paper_dir('banyan')}/metrics.json",
        summary=f"{BANYAN_OUT}/metrics_summary.json",
    log:
        log_path("banyan", "claims"),
    benchmark:
        benchmark_path("banyan", "claims")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 4000),
        runtime=runtime_per_attempt(5, 10),
    params:
        scale=SCALE,
        variants=BANYAN_VARIANTS,
    script:
        "../scripts/banyan/claims.py"


rule banyan:
    input:
        rules.banyan_claims.output.claims,
        banyan_figures(),
