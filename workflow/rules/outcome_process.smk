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
# Seeds: rate, coverage, sample_complexity and preference run one seed group per job ({seeds}: all seeds in one
# job at tiny scale, one seed per job at paper scale); figures and claims merge the groups in seed order. The
# lemma reads the first seed's instances only, prm its own instances. Every step is numpy on the CPU, one
# thread (tabular MDPs, small arrays): no GPU at any scale.
#
# Config keys read: outcome_process.{seeds, families, mdp, behaviour_eps, n_trajectories,
# bonus_scale, lsq, coverage, sample_complexity, lemma, prm, preference} (documented in config.yaml,
# schema in workflow/schemas/outcome_process.schema.yaml).


include: "helpers/outcome_process.smk"


rule outcome_process_rate:
    input:
        code=script_code("outcome_process/rate.py"),
    output:
        metrics=f"{OUTCOME_PROCESS_OUT}/rate/{{family,{OUTCOME_PROCESS_FAMILIES_RE}}}_{{seeds}}.json",
    log:
        log_path("outcome_process", "rate_{family}_{seeds}"),
    benchmark:
        benchmark_path("outcome_process", "rate_{family}_{seeds}")
    # paper scale, one seed: 10 dataset sizes up to 25,600 trajectories, four learners each (least squares
    # on H S A step rewards, pessimistic value iteration)
    # measured here: one seed of the full chain and stochastic families took about 2 s CPU
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(10, 30),
    params:
        spec=lambda wc: OUTCOME_PROCESS["mdp"][wc.family],
        eps=OUTCOME_PROCESS["behaviour_eps"],
        seeds=lambda wc: group_seeds(wc.seeds, OUTCOME_PROCESS["seeds"]),
        n_grid=OUTCOME_PROCESS["n_trajectories"],
        beta=OUTCOME_PROCESS["bonus_scale"],
        lsq=OUTCOME_PROCESS["lsq"],
    script:
        "../scripts/outcome_process/rate.py"


rule outcome_process_coverage:
    input:
        code=script_code("outcome_process/coverage.py"),
    output:
        metrics=f"{OUTCOME_PROCESS_OUT}/coverage/{{sweep,horizon|eps}}_{{seeds}}.json",
    log:
        log_path("outcome_process", "coverage_{sweep}_{seeds}"),
    benchmark:
        benchmark_path("outcome_process", "coverage_{sweep}_{seeds}")
    # paper scale, one seed: up to 10 sweep points x 10 repeats of 400 trajectories, horizons up to 14
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(10, 30),
    params:
        points=lambda wc: outcome_process_sweep_points(wc.sweep),
        chain=OUTCOME_PROCESS_CHAIN,
        n=OUTCOME_PROCESS_COVERAGE["n_trajectories"],
        seeds=lambda wc: group_seeds(wc.seeds, OUTCOME_PROCESS["seeds"]),
        repeats=OUTCOME_PROCESS_COVERAGE["repeats"],
        beta=OUTCOME_PROCESS["bonus_scale"],
        lsq=OUTCOME_PROCESS["lsq"],
    script:
        "../scripts/outcome_process/coverage.py"


rule outcome_process_sample_complexity:
    input:
        code=script_code("outcome_process/sample_complexity.py"),
    output:
        metrics=f"{OUTCOME_PROCESS_OUT}/coverage/samples_{{seeds}}.json",
    log:
        log_path("outcome_process", "sample_complexity_{seeds}"),
    benchmark:
        benchmark_path("outcome_process", "sample_complexity_{seeds}")
    # paper scale, one seed: 10 horizons (to 14) x 13 dataset sizes up to 102,400 trajectories
    # measured here: its largest horizon (14) for one seed took 1.3 s CPU
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 4000),
        runtime=runtime_per_attempt(10, 30),
    params:
        points=outcome_process_sweep_points("horizon"),
        chain=OUTCOME_PROCESS_CHAIN,
        n_grid=OUTCOME_PROCESS["sample_complexity"]["n_trajectories"],
        seeds=lambda wc: group_seeds(wc.seeds, OUTCOME_PROCESS["seeds"]),
        beta=OUTCOME_PROCESS["bonus_scale"],
        lsq=OUTCOME_PROCESS["lsq"],
    script:
        "../scripts/outcome_process/sample_complexity.py"


rule outcome_process_lemma:
    input:
        code=script_code("outcome_process/lemma.py"),
    output:
        metrics=f"{OUTCOME_PROCESS_OUT}/lemma.json",
    log:
        log_path("outcome_process", "lemma"),
    benchmark:
        benchmark_path("outcome_process", "lemma")
    # one seed's instances: exact occupancy ratios of 16 random policies per family and sweep point
    threads: 1
    resources:
        mem_mb=per_attempt(2000, 4000),
        runtime=runtime_per_attempt(10, 30),
    params:
        families=OUTCOME_PROCESS["families"],
        specs=OUTCOME_PROCESS["mdp"],
        eps=OUTCOME_PROCESS["behaviour_eps"],
        sweep_points={
            s: outcome_process_sweep_points(s) for s in OUTCOME_PROCESS_SWEEPS
        },
        chain=OUTCOME_PROCESS_CHAIN,
        n_policies=OUTCOME_PROCESS["lemma"]["n_random_policies"],
        seed=OUTCOME_PROCESS["seeds"][0],
    script:
        "../scripts/outcome_process/lemma.py"


rule outcome_process_prm:
    input:
        code=script_code("outcome_process/prm.py"),
    output:
        metrics=f"{OUTCOME_PROCESS_OUT}/prm.json",
    log:
        log_path("outcome_process", "prm"),
    benchmark:
        benchmark_path("outcome_process", "prm")
    # paper scale: 100 instances per family, Monte Carlo rollouts up to 256 per (h, s, a)
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(10, 60),
    params:
        families=OUTCOME_PROCESS["prm"]["families"],
        specs=outcome_process_prm_specs(),
        eps=OUTCOME_PROCESS["prm"]["behaviour_eps"],
        n_instances=OUTCOME_PROCESS["prm"]["n_instances"],
        rollouts=OUTCOME_PROCESS["prm"]["rollouts"],
    script:
        "../scripts/outcome_process/prm.py"


rule outcome_process_preference:
    input:
        code=script_code("outcome_process/preference.py"),
    output:
        metrics=f"{OUTCOME_PROCESS_OUT}/preference/{{family,{OUTCOME_PROCESS_FAMILIES_RE}}}_{{seeds}}.json",
    log:
        log_path("outcome_process", "preference_{family}_{seeds}"),
    benchmark:
        benchmark_path("outcome_process", "preference_{family}_{seeds}")
    # paper scale, one seed: a Bradley-Terry fit (FISTA, up to 500 iterations) per dataset size up to 25,600
    # measured here: one seed of the full stochastic family took 1.5 s CPU
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(10, 30),
    params:
        spec=lambda wc: OUTCOME_PROCESS["mdp"][wc.family],
        eps=OUTCOME_PROCESS["behaviour_eps"],
        seeds=lambda wc: group_seeds(wc.seeds, OUTCOME_PROCESS["seeds"]),
        n_grid=OUTCOME_PROCESS["n_trajectories"],
        beta=OUTCOME_PROCESS["bonus_scale"],
        bt=OUTCOME_PROCESS["preference"],
    script:
        "../scripts/outcome_process/preference.py"


rule outcome_process_figures:
    input:
        rate=outcome_process_rate_files(),
        horizon=outcome_process_sweep_files("horizon"),
        eps=outcome_process_sweep_files("eps"),
        samples=outcome_process_samples_files(),
        lemma=rules.outcome_process_lemma.output.metrics,
        prm=rules.outcome_process_prm.output.metrics,
        preference=outcome_process_preference_files(),
        code=script_code("outcome_process/figures.py"),
    output:
        rate=report(
            f"{OUTCOME_PROCESS_OUT}/figures/rate.png",
            caption="../report/outcome_process_rate.rst",
            category="outcome_process",
            subcategory="rate",
        ),
        rate_data=f"{OUTCOME_PROCESS_OUT}/figures/rate.csv",
        coverage=report(
            f"{OUTCOME_PROCESS_OUT}/figures/coverage.png",
            caption="../report/outcome_process_coverage.rst",
            category="outcome_process",
            subcategory="coverage",
        ),
        lemma=report(
            f"{OUTCOME_PROCESS_OUT}/figures/lemma.png",
            caption="../report/outcome_process_lemma.rst",
            category="outcome_process",
            subcategory="change of trajectory measure",
        ),
        prm=report(
            f"{OUTCOME_PROCESS_OUT}/figures/prm.png",
            caption="../report/outcome_process_prm.rst",
            category="outcome_process",
            subcategory="process reward models",
        ),
        horizon_gap=report(
            f"{OUTCOME_PROCESS_OUT}/figures/horizon_gap.png",
            caption="../report/outcome_process_horizon_gap.rst",
            category="outcome_process",
            subcategory="coverage",
        ),
        preference=report(
            f"{OUTCOME_PROCESS_OUT}/figures/preference.png",
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
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 10),
    params:
        target=OUTCOME_PROCESS["sample_complexity"]["target_per_step"],
    script:
        "../scripts/outcome_process/figures.py"


rule outcome_process_claims:
    input:
        rate=outcome_process_rate_files(),
        horizon=outcome_process_sweep_files("horizon"),
        eps=outcome_process_sweep_files("eps"),
        samples=outcome_process_samples_files(),
        lemma=rules.outcome_process_lemma.output.metrics,
        prm=rules.outcome_process_prm.output.metrics,
        preference=outcome_process_preference_files(),
        figures=outcome_process_figure_files(),
        declaration=f"{workflow.basedir}/src/methods/outcome_process/claims.yaml",
        code=script_code("outcome_process/claims.py"),
    output:
        claims=report(
            claims_path("outcome_process"),
            caption="../report/claims.rst",
            category="outcome_process",
            subcategory="claims",
        ),
        summary=f"{OUTCOME_PROCESS_OUT}/metrics_summary.json",
        metrics=f"{paper_dir('outcome_process')}/metrics.json",
    log:
        log_path("outcome_process", "claims"),
    benchmark:
        benchmark_path("outcome_process", "claims")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 10),
    params:
        scale=SCALE,
        target=OUTCOME_PROCESS["sample_complexity"]["target_per_step"],
        families=OUTCOME_PROCESS["families"],
        prm_families=OUTCOME_PROCESS["prm"]["families"],
    script:
        "../scripts/outcome_process/claims.py"


rule outcome_process:
    input:
        rules.outcome_process_claims.output.claims,
        outcome_process_figure_files(),
