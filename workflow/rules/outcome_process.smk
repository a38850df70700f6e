# Outcome vs process supervision: "Do We Need to Verify Step by Step? Rethinking Process
# Supervision from a Theoretical Perspective", Jia, Rakhlin, Xie, ICML 2025, arXiv 2502.10581.
# A theory paper without experiments; each statement is tested on tabular episodic MDPs.
#
# DAG:
#   outcome_process_rate (family) ───────┐  sub-optimality vs n: outcome reduction, process, oracle
#   outcome_process_coverage (sweep) ────┤  horizon and behaviour-eps sweeps on the de Bruijn chain
#   outcome_process_sample_complexity ───┤  the horizon sweep on a grid of n
#   outcome_process_lemma ───────────────┤
#   outcome_process_preference (family) ─┤  the Bradley-Terry version of the reduction (rate's datasets)
#   outcome_process_prm ─────────────────┴─> outcome_process_figures ─┐
#                                        └────────────────────────────┴─> outcome_process_claims
#
# Config keys read: outcome_process.{seeds, families, mdp, behaviour_eps, n_trajectories,
# bonus_scale, lsq, coverage, sample_complexity, lemma, prm, preference} (documented in config.yaml,
# schema in workflow/schemas/outcome_process.schema.yaml).


include: "helpers/outcome_process.smk"


rule outcome_process_rate:
    input:
        code=script_code("outcome_process/rate.py"),
    output:
        metrics=f"{OP_OUT}/rate/{{family,{OP_FAMILIES_RE}}}.json",
    log:
        log_path("outcome_process", "rate_{family}"),
    benchmark:
        benchmark_path("outcome_process", "rate_{family}")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=at_scale(10, 120),
    params:
        spec=lambda wc: OP["mdp"][wc.family],
        eps=OP["behaviour_eps"],
        seeds=OP["seeds"],
        n_grid=OP["n_trajectories"],
        beta=OP["bonus_scale"],
        lsq=OP["lsq"],
    script:
        "../scripts/outcome_process/rate.py"


rule outcome_process_coverage:
    input:
        code=script_code("outcome_process/coverage.py"),
    output:
        metrics=f"{OP_OUT}/coverage/{{sweep,horizon|eps}}.json",
    log:
        log_path("outcome_process", "coverage_{sweep}"),
    benchmark:
        benchmark_path("outcome_process", "coverage_{sweep}")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=at_scale(10, 120),
    params:
        points=lambda wc: op_sweep_points(wc.sweep),
        chain=OP_CHAIN,
        n=OP_COV["n_trajectories"],
        seeds=OP["seeds"],
        repeats=OP_COV["repeats"],
        beta=OP["bonus_scale"],
        lsq=OP["lsq"],
    script:
        "../scripts/outcome_process/coverage.py"


rule outcome_process_sample_complexity:
    input:
        code=script_code("outcome_process/sample_complexity.py"),
    output:
        metrics=f"{OP_OUT}/coverage/samples.json",
    log:
        log_path("outcome_process", "sample_complexity"),
    benchmark:
        benchmark_path("outcome_process", "sample_complexity")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=at_scale(10, 240),
    params:
        points=op_sweep_points("horizon"),
        chain=OP_CHAIN,
        n_grid=OP["sample_complexity"]["n_trajectories"],
        seeds=OP["seeds"],
        beta=OP["bonus_scale"],
        lsq=OP["lsq"],
    script:
        "../scripts/outcome_process/sample_complexity.py"


rule outcome_process_lemma:
    input:
        code=script_code("outcome_process/lemma.py"),
    output:
        metrics=f"{OP_OUT}/lemma.json",
    log:
        log_path("outcome_process", "lemma"),
    benchmark:
        benchmark_path("outcome_process", "lemma")
    threads: 1
    resources:
        mem_mb=2000,
        runtime=at_scale(10, 60),
    params:
        families=OP["families"],
        specs=OP["mdp"],
        eps=OP["behaviour_eps"],
        sweep_points={s: op_sweep_points(s) for s in OP_SWEEPS},
        chain=OP_CHAIN,
        n_policies=OP["lemma"]["n_random_policies"],
        seed=OP["seeds"][0],
    script:
        "../scripts/outcome_process/lemma.py"


rule outcome_process_prm:
    input:
        code=script_code("outcome_process/prm.py"),
    output:
        metrics=f"{OP_OUT}/prm.json",
    log:
        log_path("outcome_process", "prm"),
    benchmark:
        benchmark_path("outcome_process", "prm")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=at_scale(10, 60),
    params:
        families=OP["prm"]["families"],
        specs=op_prm_specs(),
        eps=OP["prm"]["behaviour_eps"],
        n_instances=OP["prm"]["n_instances"],
        rollouts=OP["prm"]["rollouts"],
    script:
        "../scripts/outcome_process/prm.py"


rule outcome_process_preference:
    input:
        code=script_code("outcome_process/preference.py"),
    output:
        metrics=f"{OP_OUT}/preference/{{family,{OP_FAMILIES_RE}}}.json",
    log:
        log_path("outcome_process", "preference_{family}"),
    benchmark:
        benchmark_path("outcome_process", "preference_{family}")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=at_scale(10, 120),
    params:
        spec=lambda wc: OP["mdp"][wc.family],
        eps=OP["behaviour_eps"],
        seeds=OP["seeds"],
        n_grid=OP["n_trajectories"],
        beta=OP["bonus_scale"],
        bt=OP["preference"],
    script:
        "../scripts/outcome_process/preference.py"


rule outcome_process_figures:
    input:
        rate=op_rate_files(),
        horizon=op_sweep_files()["horizon"],
        eps=op_sweep_files()["eps"],
        samples=rules.outcome_process_sample_complexity.output.metrics,
        lemma=rules.outcome_process_lemma.output.metrics,
        prm=rules.outcome_process_prm.output.metrics,
        preference=op_preference_files(),
        code=script_code("outcome_process/figures.py"),
    output:
        rate=report(
            f"{OP_OUT}/figures/rate.png",
            caption="../report/outcome_process_rate.rst",
            category="outcome_process",
            subcategory="rate",
        ),
        coverage=report(
            f"{OP_OUT}/figures/coverage.png",
            caption="../report/outcome_process_coverage.rst",
            category="outcome_process",
            subcategory="coverage",
        ),
        lemma=report(
            f"{OP_OUT}/figures/lemma.png",
            caption="../report/outcome_process_lemma.rst",
            category="outcome_process",
            subcategory="change of trajectory measure",
        ),
        prm=report(
            f"{OP_OUT}/figures/prm.png",
            caption="../report/outcome_process_prm.rst",
            category="outcome_process",
            subcategory="process reward models",
        ),
        horizon_gap=report(
            f"{OP_OUT}/figures/horizon_gap.png",
            caption="../report/outcome_process_horizon_gap.rst",
            category="outcome_process",
            subcategory="coverage",
        ),
        preference=report(
            f"{OP_OUT}/figures/preference.png",
            caption="../report/outcome_process_preference.rst",
            category="outcome_process",
            subcategory="rate",
        ),
    log:
        log_path("outcome_process", "figures"),
    benchmark:
        benchmark_path("outcome_process", "figures")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        target=OP["sample_complexity"]["target_per_step"],
    script:
        "../scripts/outcome_process/figures.py"


rule outcome_process_claims:
    input:
        rate=op_rate_files(),
        horizon=op_sweep_files()["horizon"],
        eps=op_sweep_files()["eps"],
        samples=rules.outcome_process_sample_complexity.output.metrics,
        lemma=rules.outcome_process_lemma.output.metrics,
        prm=rules.outcome_process_prm.output.metrics,
        preference=op_preference_files(),
        figures=op_figures(),
        declaration=f"{workflow.basedir}/src/methods/outcome_process/claims.yaml",
        code=script_code("outcome_process/claims.py"),
    output:
        claims=report(
            claims_path("outcome_process"),
            caption="../report/claims.rst",
            category="outcome_process",
            subcategory="claims",
        ),
        summary=f"{OP_OUT}/metrics_summary.json",
    log:
        log_path("outcome_process", "claims"),
    benchmark:
        benchmark_path("outcome_process", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE,
        target=OP["sample_complexity"]["target_per_step"],
        families=OP["families"],
        prm_families=OP["prm"]["families"],
    script:
        "../scripts/outcome_process/claims.py"


rule outcome_process:
    input:
        rules.outcome_process_claims.output.claims,
        op_figures(),
