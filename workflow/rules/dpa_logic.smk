# DPA through logic: "Understanding the Logic of Direct Preference Alignment through Logic",
# Richardson, Srikumar, Sabharwal, ICML 2025, arXiv 2412.17696.
#
# DAG:
#   dpa_logic_semantics ──────────────────┐  decompiled losses vs closed forms; lattice; entailment
#   dpa_logic_tabular (policy x seed) ────┼─> dpa_logic_figures (PNGs, accuracy.csv) ─┐
#                                         └───────────────────────────────────────────┴─> dpa_logic_claims
#   full scale only (lm.enabled): dpa_logic_fetch (model + pairs, on the submit host)
#     ─> dpa_logic_lm ({seeds}: one job per seed, on the job's GPU) ─> lm/metrics_{seeds}.json
#
# Config keys read: dpa_logic.{semantics, tabular, lm} (documented in config.yaml, schema in
# workflow/schemas/dpa_logic.schema.yaml).


include: "helpers/dpa_logic.smk"


rule dpa_logic_semantics:
    input:
        code=script_code("dpa_logic/semantics.py"),
    output:
        metrics=f"{DPA_LOGIC_OUT}/semantics.json",
    log:
        log_path("dpa_logic", "semantics"),
    benchmark:
        benchmark_path("dpa_logic", "semantics")
    threads: 1
    resources:
        mem_mb=per_attempt(2000, 2000),
        runtime=runtime_per_attempt(5, 10),
    params:
        semantics=DPA_LOGIC["semantics"],
    script:
        "../scripts/dpa_logic/semantics.py"


# A table of logits (no neural network): CPU, one thread, one job per policy and seed at every scale.
rule dpa_logic_tabular:
    input:
        code=script_code("dpa_logic/tabular.py"),
    output:
        metrics=f"{DPA_LOGIC_OUT}/tabular/{{policy,{DPA_LOGIC_POLICIES_RE}}}/seed{{seed,\\d+}}.json",
    log:
        log_path("dpa_logic", "tabular_{policy}_{seed}"),
    benchmark:
        benchmark_path("dpa_logic", "tabular_{policy}_{seed}")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 60),
    params:
        feature_dim=lambda wc: DPA_LOGIC_TABULAR["policies"][wc.policy],
        task=DPA_LOGIC_TABULAR["task"],
        losses=DPA_LOGIC_TABULAR["losses"],
        hparams=DPA_LOGIC_TABULAR["hparams"],
        steps=DPA_LOGIC_TABULAR["steps"],
        lr=DPA_LOGIC_TABULAR["lr"],
        log_every=DPA_LOGIC_TABULAR["log_every"],
    script:
        "../scripts/dpa_logic/tabular.py"


# Full scale: the model's files and the preference pairs, downloaded on the submit host.
rule dpa_logic_fetch:
    input:
        code=script_code("dpa_logic/fetch.py"),
    output:
        model=directory(f"{DPA_LOGIC_OUT}/lm/model"),
        pairs=f"{DPA_LOGIC_OUT}/lm/pairs.jsonl",
    log:
        log_path("dpa_logic", "fetch"),
    benchmark:
        benchmark_path("dpa_logic", "fetch")
    localrule: True
    threads: 1
    resources:
        mem_mb=per_attempt(3000, 3000, cap=SUBMIT_HOST_MB),
        runtime=runtime_per_attempt(30, 60),
    params:
        lm=DPA_LOGIC["lm"],
    script:
        "../scripts/dpa_logic/fetch.py"


# Full scale: a 0.5B causal LM tuned with each compiled loss, one job per seed, on the job's GPU.
rule dpa_logic_lm:
    input:
        model=rules.dpa_logic_fetch.output.model,
        pairs=rules.dpa_logic_fetch.output.pairs,
        code=script_code("dpa_logic/lm.py"),
    output:
        metrics=f"{DPA_LOGIC_OUT}/lm/metrics_{{seeds}}.json",
    log:
        log_path("dpa_logic", "lm_{seeds}"),
    benchmark:
        benchmark_path("dpa_logic", "lm_{seeds}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(4000, 32000),
        runtime=runtime_per_attempt(30, 240),
        gpu=at_scale(0, 1),
    params:
        lm=DPA_LOGIC["lm"],
        seeds=lambda wc: group_seeds(wc.seeds, DPA_LOGIC["lm"]["seeds"]),
    script:
        "../scripts/dpa_logic/lm.py"


rule dpa_logic_figures:
    input:
        semantics=rules.dpa_logic_semantics.output.metrics,
        tabular=dpa_logic_tabular_list(),
        code=script_code("dpa_logic/figures.py"),
    output:
        decompile=report(
            f"{DPA_LOGIC_OUT}/figures/decompile.png",
            caption="../report/dpa_logic_decompile.rst",
            category="dpa_logic",
            subcategory="decompilation",
        ),
        lattice=report(
            f"{DPA_LOGIC_OUT}/figures/lattice.png",
            caption="../report/dpa_logic_lattice.rst",
            category="dpa_logic",
            subcategory="lattice",
        ),
        training=report(
            f"{DPA_LOGIC_OUT}/figures/training.png",
            caption="../report/dpa_logic_training.rst",
            category="dpa_logic",
            subcategory="training",
        ),
        accuracy=f"{DPA_LOGIC_OUT}/figures/accuracy.csv",
    log:
        log_path("dpa_logic", "figures"),
    benchmark:
        benchmark_path("dpa_logic", "figures")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 10),
    params:
        tabular=dpa_logic_tabular_files(),
    script:
        "../scripts/dpa_logic/figures.py"


rule dpa_logic_claims:
    input:
        semantics=rules.dpa_logic_semantics.output.metrics,
        tabular=dpa_logic_tabular_list(),
        figures=dpa_logic_figures(),
        declaration=f"{workflow.basedir}/src/methods/dpa_logic/claims.yaml",
        code=script_code("dpa_logic/claims.py"),
    output:
        claims=report(
            claims_path("dpa_logic"),
            caption="../report/claims.rst",
            category="dpa_logic",
            subcategory="claims",
        ),
        metrics=f"{paper_dir('dpa_logic')}/metrics.json",
        summary=f"{DPA_LOGIC_OUT}/metrics_summary.json",
    log:
        log_path("dpa_logic", "claims"),
    benchmark:
        benchmark_path("dpa_logic", "claims")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 10),
    params:
        scale=SCALE,
        tabular=dpa_logic_tabular_files(),
    script:
        "../scripts/dpa_logic/claims.py"


rule dpa_logic:
    input:
        dpa_logic_targets(),
