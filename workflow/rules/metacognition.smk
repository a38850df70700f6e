# Position: Truly Self-Improving Agents Require Intrinsic Metacognitive Learning. Liu & van der
# Schaar, ICML 2025 position track, arXiv 2506.05109. No experiments in the paper: an illustrative
# learner operationalises its framework (every assumption a config key).
#
# DAG:
#   metacognition_experiment (tune every agent on tune_seeds, test on seeds; changing + stationary)
#     ─┬─> metacognition_figures ─┐
#      └──────────────────────────┴─> metacognition_claims
#
# Config keys read: metacognition.{tune_seeds, seeds, environment, agent, grid}
# (documented in config.yaml, schema in workflow/schemas/metacognition.schema.yaml).


include: "helpers/metacognition.smk"


rule metacognition_experiment:
    input:
        code=script_code("metacognition/experiment.py"),
    output:
        metrics=f"{MC_OUT}/metrics.json",
        curves=f"{MC_OUT}/curves.npz",
    log:
        log_path("metacognition", "experiment"),
    benchmark:
        benchmark_path("metacognition", "experiment")
    threads: 1
    resources:
        mem_mb=at_scale(1000, 8000),
        runtime=at_scale(10, 240),
    params:
        environment=MC["environment"],
        agent=MC["agent"],
        grid=MC["grid"],
        tune_seeds=MC["tune_seeds"],
        seeds=MC["seeds"],
    script:
        "../scripts/metacognition/experiment.py"


rule metacognition_figures:
    input:
        metrics=rules.metacognition_experiment.output.metrics,
        curves=rules.metacognition_experiment.output.curves,
        code=script_code("metacognition/figures.py"),
    output:
        curves=report(
            f"{MC_OUT}/figures/curves.png",
            caption="../report/metacognition_curves.rst",
            category="metacognition",
            subcategory="illustrative simulation",
        ),
        ablation=report(
            f"{MC_OUT}/figures/ablation.png",
            caption="../report/metacognition_ablation.rst",
            category="metacognition",
            subcategory="illustrative simulation",
        ),
    log:
        log_path("metacognition", "figures"),
    benchmark:
        benchmark_path("metacognition", "figures")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        switch_at=MC["environment"]["switch_at"],
        new_family_at=MC["environment"]["new_family_at"],
    script:
        "../scripts/metacognition/figures.py"


rule metacognition_claims:
    input:
        metrics=rules.metacognition_experiment.output.metrics,
        figures=mc_figures(),
        declaration=f"{workflow.basedir}/src/methods/metacognition/claims.yaml",
        code=script_code("metacognition/claims.py"),
    output:
        claims=report(
            claims_path("metacognition"),
            caption="../report/claims.rst",
            category="metacognition",
            subcategory="claims",
        ),
        summary=f"{MC_OUT}/metrics_summary.json",
    log:
        log_path("metacognition", "claims"),
    benchmark:
        benchmark_path("metacognition", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE,
    script:
        "../scripts/metacognition/claims.py"


rule metacognition:
    input:
        rules.metacognition_claims.output.claims,
        mc_figures(),
