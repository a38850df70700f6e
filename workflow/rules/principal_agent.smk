# Learning to Incentivize in Repeated Principal-Agent Problems with Adversarial Agent Arrivals
# Liu, Maiti, Tajdini, Jamieson, Ratliff, ICML 2025, arXiv 2505.23124 (theory; simulations here).
#
# DAG:
#   principal_agent_rate (adversary) ──────┐  known greedy responses: regret vs T
#   principal_agent_sweep (arms | types) ──┤  regret vs N and vs K
#   principal_agent_lipschitz (logit | needle) ─┤  smooth responses, eps-grid + Tsallis-INF
#   principal_agent_lower_bound ───────────┤  unknown responses: linear regret
#   principal_agent_multiarm ──────────────┤  known responses, general incentives
#   principal_agent_two_point ─────────────┤  known responses: lower-bound family over T (every seed)
#   principal_agent_hidden_subset ─────────┤  known responses: lower-bound family over K x N (every seed)
#   principal_agent_zooming ───────────────┴> principal_agent_analyse (summary.json)   smooth, general incentives
#       ─> principal_agent_figures (7 PNG) ─┐
#       ─> principal_agent_claims ──────────┴> principal_agent (target)
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
        records=f"{PA_OUT}/rate/{{pa_adversary}}.json",
    log:
        log_path("principal_agent", "rate_{pa_adversary}"),
    benchmark:
        benchmark_path("principal_agent", "rate_{pa_adversary}")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=at_scale(10, 120),
    params:
        algorithms=PA["rate"]["algorithms"],
        n_arms=PA["rate"]["n_arms"],
        n_types=PA["rate"]["n_types"],
        horizons=PA["rate"]["horizons"],
        seeds=PA["seeds"],
        adversary_params=pa_adversary_params(),
    script:
        "../scripts/principal_agent/rate.py"


rule principal_agent_sweep:
    input:
        code=script_code("principal_agent/sweep.py"),
    output:
        records=f"{PA_OUT}/sweep/{{pa_dimension}}.json",
    log:
        log_path("principal_agent", "sweep_{pa_dimension}"),
    benchmark:
        benchmark_path("principal_agent", "sweep_{pa_dimension}")
    threads: 1
    resources:
        mem_mb=at_scale(1000, 4000),
        runtime=at_scale(10, 240),
    params:
        algorithms=PA["sweep"]["algorithms"],
        values=pa_sweep_values,
        n_arms=PA["rate"]["n_arms"],
        n_types=PA["rate"]["n_types"],
        horizons=PA["sweep"]["horizons"],
        seeds=PA["seeds"],
        adversary=PA["sweep"]["adversary"],
        adversary_params=pa_adversary_params(),
    script:
        "../scripts/principal_agent/sweep.py"


rule principal_agent_lipschitz:
    input:
        code=script_code("principal_agent/lipschitz.py"),
    output:
        records=f"{PA_OUT}/lipschitz/{{pa_instance}}.json",
    log:
        log_path("principal_agent", "lipschitz_{pa_instance}"),
    benchmark:
        benchmark_path("principal_agent", "lipschitz_{pa_instance}")
    threads: 1
    resources:
        mem_mb=at_scale(1000, 4000),
        runtime=at_scale(10, 240),
    params:
        horizons=PA["lipschitz"]["horizons"],
        seeds=PA["seeds"],
        n_arms=PA["lipschitz"]["n_arms"],
        logit=PA["lipschitz"]["logit"],
        needle=PA["lipschitz"]["needle"],
        adversary_params=pa_adversary_params(),
    script:
        "../scripts/principal_agent/lipschitz.py"


rule principal_agent_lower_bound:
    input:
        code=script_code("principal_agent/lower_bound.py"),
    output:
        records=f"{PA_OUT}/lower_bound.json",
    log:
        log_path("principal_agent", "lower_bound"),
    benchmark:
        benchmark_path("principal_agent", "lower_bound")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=at_scale(10, 120),
    params:
        adversary=PA["lower_bound"]["adversary"],
        algorithms=PA["lower_bound"]["algorithms"],
        horizons=PA["lower_bound"]["horizons"],
        seeds=PA["seeds"],
        window=PA["lower_bound"]["window"],
        threshold_range=PA["lower_bound"]["threshold_range"],
        adversary_params=pa_adversary_params(),
    script:
        "../scripts/principal_agent/lower_bound.py"


rule principal_agent_multiarm:
    input:
        code=script_code("principal_agent/multiarm.py"),
    output:
        records=f"{PA_OUT}/multiarm.json",
    log:
        log_path("principal_agent", "multiarm"),
    benchmark:
        benchmark_path("principal_agent", "multiarm")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=at_scale(10, 120),
    params:
        adversary=PA["multiarm"]["adversary"],
        horizons=PA["multiarm"]["horizons"],
        seeds=PA["seeds"],
        n_arms=PA["multiarm"]["n_arms"],
        n_types=PA["multiarm"]["n_types"],
        adversary_params=pa_adversary_params(),
    script:
        "../scripts/principal_agent/multiarm.py"


rule principal_agent_two_point:
    input:
        code=script_code("principal_agent/two_point.py"),
    output:
        metrics=f"{PA_OUT}/two_point.json",
    log:
        log_path("principal_agent", "two_point"),
    benchmark:
        benchmark_path("principal_agent", "two_point")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=at_scale(10, 120),
    params:
        experiment={k: v for k, v in PA["two_point"].items() if k != "seeds"},
        seeds=PA["two_point"]["seeds"],
    script:
        "../scripts/principal_agent/two_point.py"


rule principal_agent_hidden_subset:
    input:
        code=script_code("principal_agent/hidden_subset.py"),
    output:
        metrics=f"{PA_OUT}/hidden_subset.json",
    log:
        log_path("principal_agent", "hidden_subset"),
    benchmark:
        benchmark_path("principal_agent", "hidden_subset")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=at_scale(10, 240),
    params:
        experiment={k: v for k, v in PA["hidden_subset"].items() if k != "seeds"},
        seeds=PA["hidden_subset"]["seeds"],
    script:
        "../scripts/principal_agent/hidden_subset.py"


rule principal_agent_zooming:
    input:
        code=script_code("principal_agent/zooming.py"),
    output:
        metrics=f"{PA_OUT}/zooming.json",
    log:
        log_path("principal_agent", "zooming"),
    benchmark:
        benchmark_path("principal_agent", "zooming")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=at_scale(10, 480),
    params:
        experiment={k: v for k, v in PA["zooming"].items() if k != "seeds"},
        seeds=PA["zooming"]["seeds"],
    script:
        "../scripts/principal_agent/zooming.py"


rule principal_agent_analyse:
    input:
        rate=pa_rate_records(),
        sweep_arms=f"{PA_OUT}/sweep/arms.json",
        sweep_types=f"{PA_OUT}/sweep/types.json",
        logit=f"{PA_OUT}/lipschitz/logit.json",
        needle=f"{PA_OUT}/lipschitz/needle.json",
        lower_bound=rules.principal_agent_lower_bound.output.records,
        multiarm=rules.principal_agent_multiarm.output.records,
        two_point=rules.principal_agent_two_point.output.metrics,
        hidden_subset=rules.principal_agent_hidden_subset.output.metrics,
        zooming=rules.principal_agent_zooming.output.metrics,
        code=script_code("principal_agent/analyse.py"),
    output:
        summary=f"{PA_OUT}/summary.json",
    log:
        log_path("principal_agent", "analyse"),
    benchmark:
        benchmark_path("principal_agent", "analyse")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        n_boot=PA["analysis"]["bootstrap"],
        level=PA["analysis"]["level"],
    script:
        "../scripts/principal_agent/analyse.py"


rule principal_agent_figures:
    input:
        summary=rules.principal_agent_analyse.output.summary,
        two_point=rules.principal_agent_two_point.output.metrics,
        hidden_subset=rules.principal_agent_hidden_subset.output.metrics,
        zooming=rules.principal_agent_zooming.output.metrics,
        code=script_code("principal_agent/figures.py"),
    output:
        rate=report(
            f"{PA_OUT}/figures/regret_vs_T.png",
            caption="../report/principal_agent_rate.rst",
            category="principal_agent",
            subcategory="known greedy responses",
        ),
        sweep=report(
            f"{PA_OUT}/figures/regret_vs_N.png",
            caption="../report/principal_agent_sweep.rst",
            category="principal_agent",
            subcategory="known greedy responses",
        ),
        lipschitz=report(
            f"{PA_OUT}/figures/lipschitz.png",
            caption="../report/principal_agent_lipschitz.rst",
            category="principal_agent",
            subcategory="smooth responses",
        ),
        lower_bound=report(
            f"{PA_OUT}/figures/lower_bound.png",
            caption="../report/principal_agent_lower_bound.rst",
            category="principal_agent",
            subcategory="lower bound and multi-arm",
        ),
        two_point=report(
            f"{PA_OUT}/figures/two_point.png",
            caption="../report/principal_agent_two_point.rst",
            category="principal_agent",
            subcategory="lower bound, known responses",
        ),
        hidden_subset=report(
            f"{PA_OUT}/figures/hidden_subset.png",
            caption="../report/principal_agent_hidden_subset.rst",
            category="principal_agent",
            subcategory="lower bound, known responses",
        ),
        zooming=report(
            f"{PA_OUT}/figures/zooming.png",
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
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/principal_agent/figures.py"


rule principal_agent_claims:
    input:
        summary=rules.principal_agent_analyse.output.summary,
        figures=pa_figures(),
        declaration=f"{workflow.basedir}/src/methods/principal_agent/claims.yaml",
        code=script_code("principal_agent/claims.py"),
    output:
        claims=report(
            claims_path("principal_agent"),
            caption="../report/claims.rst",
            category="principal_agent",
            subcategory="claims",
        ),
    log:
        log_path("principal_agent", "claims"),
    benchmark:
        benchmark_path("principal_agent", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE,
        adversaries=PA["rate"]["adversaries"],
        lb_algorithms=PA["lower_bound"]["algorithms"],
        two_point_algorithms=PA["two_point"]["algorithms"],
    script:
        "../scripts/principal_agent/claims.py"


rule principal_agent:
    input:
        rules.principal_agent_claims.output.claims,
        pa_figures(),
