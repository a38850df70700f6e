# Position: Truly Self-Improving Agents Require Intrinsic Metacognitive Learning. Liu & van der
# Schaar, ICML 2025 position track, arXiv 2506.05109. No experiments in the paper: an illustrative
# learner operationalises its framework (every assumption a config key).
#
# DAG:
#   metacognition_tune (every agent tuned on tune_seeds; changing + stationary)
#     ─> metacognition_evaluate (the tuned agents on the test seeds of one seed group)
#          ─┬─> metacognition_figures ─┐
#           └──────────────────────────┴─> metacognition_claims
#
# Seeds: the test runs one seed group per job ({seeds}: all test seeds in one job at tiny scale, one seed per
# job at paper scale); figures and claims merge the groups in seed order. Tuning runs once, on tune_seeds.
# numpy on the CPU, one thread: no GPU.
#
# Config keys read: metacognition.{tune_seeds, seeds, environment, agent, grid}
# (documented in config.yaml, schema in workflow/schemas/metacognition.schema.yaml).


include: "helpers/metacognition.smk"


rule metacognition_tune:
    input:
        code=script_code("metacognition/tune.py"),
    output:
        tuned=f"{METACOGNITION_OUT}/experiment/tuned.json",
    log:
        log_path("metacognition", "tune"),
    benchmark:
        benchmark_path("metacognition", "tune")
    # paper scale: 9 agents x up to 30 grid candidates, each 3,000 steps vectorised over the 20 tuning seeds
    # measured here: one candidate over the 20 tuning seeds took 0.6 s CPU (175 candidates)
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(10, 60),
    params:
        environment=METACOGNITION["environment"],
        agent=METACOGNITION["agent"],
        grid=METACOGNITION["grid"],
        tune_seeds=METACOGNITION["tune_seeds"],
        seeds=METACOGNITION["seeds"],
    script:
        "../scripts/metacognition/tune.py"


rule metacognition_evaluate:
    input:
        tuned=rules.metacognition_tune.output.tuned,
        code=script_code("metacognition/evaluate.py"),
    output:
        outcomes=f"{METACOGNITION_OUT}/experiment/{{seeds}}.json",
        curves=f"{METACOGNITION_OUT}/experiment/{{seeds}}_curves.npz",
    log:
        log_path("metacognition", "evaluate_{seeds}"),
    benchmark:
        benchmark_path("metacognition", "evaluate_{seeds}")
    # paper scale, one seed: 9 tuned agents x 3,000 steps
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(10, 30),
    params:
        environment=METACOGNITION["environment"],
        seeds=lambda wc: group_seeds(wc.seeds, METACOGNITION["seeds"]),
    script:
        "../scripts/metacognition/evaluate.py"


rule metacognition_figures:
    input:
        outcomes=metacognition_evaluation_files("{seeds}.json"),
        curves=metacognition_evaluation_files("{seeds}_curves.npz"),
        code=script_code("metacognition/figures.py"),
    output:
        curves=report(
            f"{METACOGNITION_OUT}/figures/curves.png",
            caption="../report/metacognition_curves.rst",
            category="metacognition",
            subcategory="illustrative simulation",
        ),
        curves_data=f"{METACOGNITION_OUT}/figures/curves.csv",
        ablation=report(
            f"{METACOGNITION_OUT}/figures/ablation.png",
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
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 10),
    params:
        switch_at=METACOGNITION["environment"]["switch_at"],
        new_family_at=METACOGNITION["environment"]["new_family_at"],
    script:
        "../scripts/metacognition/figures.py"


rule metacognition_claims:
    input:
        outcomes=metacognition_evaluation_files("{seeds}.json"),
        figures=metacognition_figure_files(),
        declaration=f"{workflow.basedir}/src/methods/metacognition/claims.yaml",
        code=script_code("metacognition/claims.py"),
    output:
        claims=report(
            claims_path("metacognition"),
            caption="../report/claims.rst",
            category="metacognition",
            subcategory="claims",
        ),
        summary=f"{METACOGNITION_OUT}/metrics_summary.json",
        metrics=f"{paper_dir('metacognition')}/metrics.json",
    log:
        log_path("metacognition", "claims"),
    benchmark:
        benchmark_path("metacognition", "claims")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 10),
    params:
        scale=SCALE,
    script:
        "../scripts/metacognition/claims.py"


rule metacognition:
    input:
        rules.metacognition_claims.output.claims,
        metacognition_figure_files(),
