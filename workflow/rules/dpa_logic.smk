# DPA through logic: "Understanding the Logic of Direct Preference Alignment through Logic",
# Richardson, Srikumar, Sabharwal, ICML 2025, arXiv 2412.17696.
#
# DAG:
#   dpa_logic_semantics ──────────────────┐  decompiled losses vs closed forms; lattice; entailment
#   dpa_logic_tabular (policy x seed) ────┼─> dpa_logic_figures ─┐
#                                         └──────────────────────┴─> dpa_logic_claims
#   dpa_logic_lm (full scale only: lm.enabled) ─> lm/metrics.json
#
# Config keys read: dpa_logic.{semantics, tabular, lm} (documented in config.yaml, schema in
# workflow/schemas/dpa_logic.schema.yaml).


include: "helpers/dpa_logic.smk"


rule dpa_logic_semantics:
    input:
        code=script_code("dpa_logic/semantics.py"),
    output:
        metrics=f"{DPA_OUT}/semantics.json",
    log:
        log_path("dpa_logic", "semantics"),
    benchmark:
        benchmark_path("dpa_logic", "semantics")
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        semantics=DPA["semantics"],
    script:
        "../scripts/dpa_logic/semantics.py"


rule dpa_logic_tabular:
    input:
        code=script_code("dpa_logic/tabular.py"),
    output:
        metrics=f"{DPA_OUT}/tabular/{{policy,{DPA_POLICIES_RE}}}/seed{{seed,\\d+}}.json",
    log:
        log_path("dpa_logic", "tabular_{policy}_{seed}"),
    benchmark:
        benchmark_path("dpa_logic", "tabular_{policy}_{seed}")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=at_scale(5, 120),
    params:
        feature_dim=lambda wc: DPA_TAB["policies"][wc.policy],
        task=DPA_TAB["task"],
        losses=DPA_TAB["losses"],
        hparams=DPA_TAB["hparams"],
        steps=DPA_TAB["steps"],
        lr=DPA_TAB["lr"],
        log_every=DPA_TAB["log_every"],
    script:
        "../scripts/dpa_logic/tabular.py"


rule dpa_logic_lm:
    input:
        code=script_code("dpa_logic/lm.py"),
    output:
        metrics=f"{DPA_OUT}/lm/metrics.json",
    log:
        log_path("dpa_logic", "lm"),
    benchmark:
        benchmark_path("dpa_logic", "lm")
    threads: 4
    resources:
        mem_mb=at_scale(4000, 32000),
        runtime=at_scale(30, 600),
        gpu=at_scale(0, 1),
    params:
        lm=DPA["lm"],
    script:
        "../scripts/dpa_logic/lm.py"


rule dpa_logic_figures:
    input:
        semantics=rules.dpa_logic_semantics.output.metrics,
        tabular=dpa_tabular_list(),
        code=script_code("dpa_logic/figures.py"),
    output:
        decompile=report(
            f"{DPA_OUT}/figures/decompile.png",
            caption="../report/dpa_logic_decompile.rst",
            category="dpa_logic",
            subcategory="decompilation",
        ),
        lattice=report(
            f"{DPA_OUT}/figures/lattice.png",
            caption="../report/dpa_logic_lattice.rst",
            category="dpa_logic",
            subcategory="lattice",
        ),
        training=report(
            f"{DPA_OUT}/figures/training.png",
            caption="../report/dpa_logic_training.rst",
            category="dpa_logic",
            subcategory="training",
        ),
    log:
        log_path("dpa_logic", "figures"),
    benchmark:
        benchmark_path("dpa_logic", "figures")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        tabular=dpa_tabular_files(),
    script:
        "../scripts/dpa_logic/figures.py"


rule dpa_logic_claims:
    input:
        semantics=rules.dpa_logic_semantics.output.metrics,
        tabular=dpa_tabular_list(),
        figures=dpa_figures(),
        declaration=f"{workflow.basedir}/src/methods/dpa_logic/claims.yaml",
        code=script_code("dpa_logic/claims.py"),
    output:
        claims=report(
            claims_path("dpa_logic"),
            caption="../report/claims.rst",
            category="dpa_logic",
            subcategory="claims",
        ),
        summary=f"{DPA_OUT}/metrics_summary.json",
    log:
        log_path("dpa_logic", "claims"),
    benchmark:
        benchmark_path("dpa_logic", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE,
        tabular=dpa_tabular_files(),
    script:
        "../scripts/dpa_logic/claims.py"


rule dpa_logic:
    input:
        dpa_targets(),
