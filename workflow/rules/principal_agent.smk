# Learning to Incentivize in Repeated Principal-Agent Problems with Adversarial Agent Arrivals
# Liu, Maiti, Tajdini, Jamieson, Ratliff, ICML 2025, arXiv 2505.23124 (theory; simulations here).
#
# DAG:
#   principal_agent_rate (adversary) ──────┐  known greedy responses: regret vs T
#   principal_agent_sweep (arms | types) ──┤  regret vs N and vs K
#   principal_agent_lipschitz (logit | needle) ─┤  smooth responses, eps-grid + Tsallis-INF
#   principal_agent_lower_bound ───────────┤  unknown responses: linear regret
#   principal_agent_multiarm ──────────────┤  known responses, general incentives
#   principal_agent_two_point ─────────────┤  known responses: lower-bound family over T (two_point.seeds)
#   principal_agent_hidden_subset ─────────┤  known responses: lower-bound family over K x N (hidden_subset.seeds)
#   principal_agent_zooming ───────────────┴> principal_agent_analyse (summary.json)   smooth, general incentives
#       ─> principal_agent_figures (7 PNG) ─┐
#       ─> principal_agent_claims ──────────┴> principal_agent (target)
#
# Seeds: every simulation step runs one seed group per job ({seeds}: all seeds in one job at tiny scale, one
# seed per job at paper scale); analyse and figures merge the groups in seed order. Every step is numpy on the
# CPU, one thread (small arrays, per-round Python loops): no GPU at any scale.
#
# Config keys read: principal_agent.{seeds, adversary, rate, sweep, lipschitz, lower_bound, multiarm,
# two_point, hidden_subset, zooming, analysis}
# (documented in config.yaml, schema in workflow/schemas/principal_agent.schema.yaml).


include: "helpers/principal_agent.smk"


# Wildcard names carry the paper's prefix: top-level constraints apply to every rule file.
wildcard_constraints:
    pa_adversary="blocked|periodic|random|adaptive",
    pa_dimension="arms|types",
    pa_instance="logit|needle",


rule principal_agent_rate:
    input:
        code=script_code("principal_agent/rate.py"),
    output:
        records=f"{PRINCIPAL_AGENT_OUT}/rate/{{pa_adversary}}_{{seeds}}.json",
    log:
        log_path("principal_agent", "rate_{pa_adversary}_{seeds}"),
    benchmark:
        benchmark_path("principal_agent", "rate_{pa_adversary}_{seeds}")
    # paper scale, one seed: 4 learners x 10^5 rounds over 9 batched horizons
    # measured here: one seed to T = 10^4 took 2 s CPU (about 20 s at 10^5)
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(10, 30),
    params:
        algorithms=PRINCIPAL_AGENT["rate"]["algorithms"],
        n_arms=PRINCIPAL_AGENT["rate"]["n_arms"],
        n_types=PRINCIPAL_AGENT["rate"]["n_types"],
        horizons=PRINCIPAL_AGENT["rate"]["horizons"],
        seeds=lambda wc: group_seeds(wc.seeds, PRINCIPAL_AGENT["seeds"]),
        adversary_params=principal_agent_adversary_params(),
    script:
        "../scripts/principal_agent/rate.py"


rule principal_agent_sweep:
    input:
        code=script_code("principal_agent/sweep.py"),
    output:
        records=f"{PRINCIPAL_AGENT_OUT}/sweep/{{pa_dimension}}_{{seeds}}.json",
    log:
        log_path("principal_agent", "sweep_{pa_dimension}_{seeds}"),
    benchmark:
        benchmark_path("principal_agent", "sweep_{pa_dimension}_{seeds}")
    # paper scale, one seed: 4 learners x 10^5 rounds over 27 batched (N or K, T) runs, up to ~1,600 actions
    # measured here: one seed to T = 10^4 took 2 s CPU for the N sweep
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 4000),
        runtime=runtime_per_attempt(10, 30),
    params:
        algorithms=PRINCIPAL_AGENT["sweep"]["algorithms"],
        values=principal_agent_sweep_values,
        n_arms=PRINCIPAL_AGENT["rate"]["n_arms"],
        n_types=PRINCIPAL_AGENT["rate"]["n_types"],
        horizons=PRINCIPAL_AGENT["sweep"]["horizons"],
        seeds=lambda wc: group_seeds(wc.seeds, PRINCIPAL_AGENT["seeds"]),
        adversary=PRINCIPAL_AGENT["sweep"]["adversary"],
        adversary_params=principal_agent_adversary_params(),
    script:
        "../scripts/principal_agent/sweep.py"


rule principal_agent_lipschitz:
    input:
        code=script_code("principal_agent/lipschitz.py"),
    output:
        records=f"{PRINCIPAL_AGENT_OUT}/lipschitz/{{pa_instance}}_{{seeds}}.json",
    log:
        log_path("principal_agent", "lipschitz_{pa_instance}_{seeds}"),
    benchmark:
        benchmark_path("principal_agent", "lipschitz_{pa_instance}_{seeds}")
    # paper scale, one seed: Tsallis-INF (a Newton solve per round) on eps-grids over 10^5 rounds, 9 horizons
    # measured here: one seed to T = 10^4 took 1 s CPU (logit)
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 4000),
        runtime=runtime_per_attempt(10, 30),
    params:
        horizons=PRINCIPAL_AGENT["lipschitz"]["horizons"],
        seeds=lambda wc: group_seeds(wc.seeds, PRINCIPAL_AGENT["seeds"]),
        n_arms=PRINCIPAL_AGENT["lipschitz"]["n_arms"],
        logit=PRINCIPAL_AGENT["lipschitz"]["logit"],
        needle=PRINCIPAL_AGENT["lipschitz"]["needle"],
        adversary_params=principal_agent_adversary_params(),
    script:
        "../scripts/principal_agent/lipschitz.py"


rule principal_agent_lower_bound:
    input:
        code=script_code("principal_agent/lower_bound.py"),
    output:
        records=f"{PRINCIPAL_AGENT_OUT}/lower_bound/{{seeds}}.json",
    log:
        log_path("principal_agent", "lower_bound_{seeds}"),
    benchmark:
        benchmark_path("principal_agent", "lower_bound_{seeds}")
    # paper scale, one seed: 3 learners x 10^5 rounds over 9 batched horizons on a 2-type instance
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(10, 30),
    params:
        adversary=PRINCIPAL_AGENT["lower_bound"]["adversary"],
        algorithms=PRINCIPAL_AGENT["lower_bound"]["algorithms"],
        horizons=PRINCIPAL_AGENT["lower_bound"]["horizons"],
        seeds=lambda wc: group_seeds(wc.seeds, PRINCIPAL_AGENT["seeds"]),
        window=PRINCIPAL_AGENT["lower_bound"]["window"],
        threshold_range=PRINCIPAL_AGENT["lower_bound"]["threshold_range"],
        adversary_params=principal_agent_adversary_params(),
    script:
        "../scripts/principal_agent/lower_bound.py"


rule principal_agent_multiarm:
    input:
        code=script_code("principal_agent/multiarm.py"),
    output:
        records=f"{PRINCIPAL_AGENT_OUT}/multiarm/{{seeds}}.json",
    log:
        log_path("principal_agent", "multiarm_{seeds}"),
    benchmark:
        benchmark_path("principal_agent", "multiarm_{seeds}")
    # paper scale, one seed: vertex enumeration of the response polytopes (N = 3, K = 3), then 10^5 rounds
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(10, 30),
    params:
        adversary=PRINCIPAL_AGENT["multiarm"]["adversary"],
        horizons=PRINCIPAL_AGENT["multiarm"]["horizons"],
        seeds=lambda wc: group_seeds(wc.seeds, PRINCIPAL_AGENT["seeds"]),
        n_arms=PRINCIPAL_AGENT["multiarm"]["n_arms"],
        n_types=PRINCIPAL_AGENT["multiarm"]["n_types"],
        adversary_params=principal_agent_adversary_params(),
    script:
        "../scripts/principal_agent/multiarm.py"


rule principal_agent_two_point:
    input:
        code=script_code("principal_agent/two_point.py"),
    output:
        metrics=f"{PRINCIPAL_AGENT_OUT}/two_point/{{seeds}}.json",
    log:
        log_path("principal_agent", "two_point_{seeds}"),
    benchmark:
        benchmark_path("principal_agent", "two_point_{seeds}")
    # one seed of two_point.seeds: 2 learners x 2 signs x n_runs runs per horizon, batched
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(10, 30),
    params:
        experiment={
            k: v for k, v in PRINCIPAL_AGENT["two_point"].items() if k != "seeds"
        },
        seeds=lambda wc: group_seeds(wc.seeds, PRINCIPAL_AGENT["two_point"]["seeds"]),
    script:
        "../scripts/principal_agent/two_point.py"


rule principal_agent_hidden_subset:
    input:
        code=script_code("principal_agent/hidden_subset.py"),
    output:
        metrics=f"{PRINCIPAL_AGENT_OUT}/hidden_subset/{{seeds}}.json",
    log:
        log_path("principal_agent", "hidden_subset_{seeds}"),
    benchmark:
        benchmark_path("principal_agent", "hidden_subset_{seeds}")
    # paper scale, one seed of hidden_subset.seeds: 16 (K, N) points x 200 batched runs x 2 x 10^4 rounds
    # measured here: the 4 extreme (K, N) points with 20 runs took 8 s CPU (a few minutes in all)
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 4000),
        runtime=runtime_per_attempt(10, 60),
    params:
        experiment={
            k: v for k, v in PRINCIPAL_AGENT["hidden_subset"].items() if k != "seeds"
        },
        seeds=lambda wc: group_seeds(
            wc.seeds, PRINCIPAL_AGENT["hidden_subset"]["seeds"]
        ),
    script:
        "../scripts/principal_agent/hidden_subset.py"


rule principal_agent_zooming:
    input:
        code=script_code("principal_agent/zooming.py"),
    output:
        metrics=f"{PRINCIPAL_AGENT_OUT}/zooming/{{seeds}}.json",
    log:
        log_path("principal_agent", "zooming_{seeds}"),
    benchmark:
        benchmark_path("principal_agent", "zooming_{seeds}")
    # paper scale, one seed of zooming.seeds: 10 anytime runs to T = 64,000 plus one tuned run per horizon,
    # a Python loop per round
    # measured here: one run to T = 16,000 took 2 s CPU (about a minute in all)
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(10, 60),
    params:
        experiment={k: v for k, v in PRINCIPAL_AGENT["zooming"].items() if k != "seeds"},
        seeds=lambda wc: group_seeds(wc.seeds, PRINCIPAL_AGENT["zooming"]["seeds"]),
    script:
        "../scripts/principal_agent/zooming.py"


rule principal_agent_analyse:
    input:
        rate=principal_agent_rate_files(),
        sweep=principal_agent_group_files(
            "sweep/{pa_dimension}_{seeds}.json", pa_dimension=["arms", "types"]
        ),
        lipschitz=principal_agent_group_files(
            "lipschitz/{pa_instance}_{seeds}.json", pa_instance=["logit", "needle"]
        ),
        lower_bound=principal_agent_group_files("lower_bound/{seeds}.json"),
        multiarm=principal_agent_group_files("multiarm/{seeds}.json"),
        two_point=principal_agent_group_files(
            "two_point/{seeds}.json", seeds_key="two_point"
        ),
        hidden_subset=principal_agent_group_files(
            "hidden_subset/{seeds}.json", seeds_key="hidden_subset"
        ),
        zooming=principal_agent_group_files("zooming/{seeds}.json", seeds_key="zooming"),
        code=script_code("principal_agent/analyse.py"),
    output:
        summary=f"{PRINCIPAL_AGENT_OUT}/summary.json",
    log:
        log_path("principal_agent", "analyse"),
    benchmark:
        benchmark_path("principal_agent", "analyse")
    # paper scale: bootstrap intervals (5,000 resamples) of some forty slopes over 20 seeds
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 4000),
        runtime=runtime_per_attempt(5, 30),
    params:
        n_boot=PRINCIPAL_AGENT["analysis"]["bootstrap"],
        level=PRINCIPAL_AGENT["analysis"]["level"],
    script:
        "../scripts/principal_agent/analyse.py"


rule principal_agent_figures:
    input:
        summary=rules.principal_agent_analyse.output.summary,
        two_point=principal_agent_group_files(
            "two_point/{seeds}.json", seeds_key="two_point"
        ),
        hidden_subset=principal_agent_group_files(
            "hidden_subset/{seeds}.json", seeds_key="hidden_subset"
        ),
        zooming=principal_agent_group_files("zooming/{seeds}.json", seeds_key="zooming"),
        code=script_code("principal_agent/figures.py"),
    output:
        rate=report(
            f"{PRINCIPAL_AGENT_OUT}/figures/regret_vs_T.png",
            caption="../report/principal_agent_rate.rst",
            category="principal_agent",
            subcategory="known greedy responses",
        ),
        rate_data=f"{PRINCIPAL_AGENT_OUT}/figures/regret_vs_T.csv",
        sweep=report(
            f"{PRINCIPAL_AGENT_OUT}/figures/regret_vs_N.png",
            caption="../report/principal_agent_sweep.rst",
            category="principal_agent",
            subcategory="known greedy responses",
        ),
        lipschitz=report(
            f"{PRINCIPAL_AGENT_OUT}/figures/lipschitz.png",
            caption="../report/principal_agent_lipschitz.rst",
            category="principal_agent",
            subcategory="smooth responses",
        ),
        lower_bound=report(
            f"{PRINCIPAL_AGENT_OUT}/figures/lower_bound.png",
            caption="../report/principal_agent_lower_bound.rst",
            category="principal_agent",
            subcategory="lower bound and multi-arm",
        ),
        two_point=report(
            f"{PRINCIPAL_AGENT_OUT}/figures/two_point.png",
            caption="../report/principal_agent_two_point.rst",
            category="principal_agent",
            subcategory="lower bound, known responses",
        ),
        hidden_subset=report(
            f"{PRINCIPAL_AGENT_OUT}/figures/hidden_subset.png",
            caption="../report/principal_agent_hidden_subset.rst",
            category="principal_agent",
            subcategory="lower bound, known responses",
        ),
        zooming=report(
            f"{PRINCIPAL_AGENT_OUT}/figures/zooming.png",
            caption="../report/principal_agent_zooming.rst",
            category="principal_agent",
            subcategory="smooth responses",
        ),
    log:
        log_path("principal_agent", "figures"),
    benchmark:
        benchmark_path("principal_agent", "figures")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 10),
    script:
        "../scripts/principal_agent/figures.py"


rule principal_agent_claims:
    input:
        summary=rules.principal_agent_analyse.output.summary,
        figures=principal_agent_figure_files(),
        declaration=f"{workflow.basedir}/src/methods/principal_agent/claims.yaml",
        code=script_code("principal_agent/claims.py"),
    output:
        claims=report(
            claims_path("principal_agent"),
            caption="../report/claims.rst",
            category="principal_agent",
            subcategory="claims",
        ),
        summary=f"{PRINCIPAL_AGENT_OUT}/metrics_summary.json",
        metrics=f"{paper_dir('principal_agent')}/metrics.json",
    log:
        log_path("principal_agent", "claims"),
    benchmark:
        benchmark_path("principal_agent", "claims")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 1000),
        runtime=runtime_per_attempt(5, 5),
    params:
        scale=SCALE,
        adversaries=PRINCIPAL_AGENT["rate"]["adversaries"],
        lb_algorithms=PRINCIPAL_AGENT["lower_bound"]["algorithms"],
        two_point_algorithms=PRINCIPAL_AGENT["two_point"]["algorithms"],
    script:
        "../scripts/principal_agent/claims.py"


rule principal_agent:
    input:
        rules.principal_agent_claims.output.claims,
        principal_agent_figure_files(),
