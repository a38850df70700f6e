# Issue 30 [X3]: statements of the theory papers that their own rows left untested.
# binary_denoising ("Sampling Binary Data by Denoising through Score Functions", Bach & Saremi,
# ICML 2025, arXiv 2502.00557): the contraction rate and the stationary-law bias of the one-stage
# sampler by exact enumeration on a small hypercube. principal_agent ("Learning to Incentivize in
# Repeated Principal-Agent Problems with Adversarial Agent Arrivals", ICML 2025, arXiv 2505.23124):
# the T-dependence of the lower bound for known greedy responses on a two-point family, and its K and
# N dependence on a hidden-subset family (x3audit_pa_kn_grid); the smooth general-incentive row with a
# zooming learner against an adaptive adversary (x3audit_pa_zooming). outcome_process, preference-based
# (Bradley-Terry) version of the reduction, on the rate experiment's families (x3audit_op_preference).
# outcome_process (Jia, Rakhlin, Xie, ICML 2025, arXiv 2502.10581): the H-dependence of the
# outcome-to-process gap, read from outcome_process's horizon sweep (outcome_process_coverage).
#
# DAG:
#   x3audit_bd_exact (seed) ────────┬─> x3audit_figures ─┐
#   x3audit_pa_lower_bound (seed) ──┤                    │
#   x3audit_pa_kn_grid (seed) ──────┤                    │
#   x3audit_pa_zooming (seed) ──────┤                    │
#   x3audit_op_preference (family) ─┴────────────────────┴─> x3audit_claims
#   outcome_process_coverage (horizon sweep) ────────────┴────────┘
#
# Config keys read: x3audit.{seeds, bd_exact, pa_lower_bound, pa_kn_grid,
# pa_zooming, op_preference} and outcome_process.{families, mdp, behaviour_eps, seeds,
# n_trajectories, bonus_scale} (documented in config.yaml, schema in
# workflow/schemas/x3audit.schema.yaml).


include: "helpers/x3audit.smk"


wildcard_constraints:
    x3_seed="[0-9]+",


rule x3audit_bd_exact:
    input:
        code=script_code("x3audit/bd_exact.py"),
    output:
        metrics=f"{X3_OUT}/bd_exact/s{{x3_seed}}.json",
    log:
        log_path("x3audit", "bd_exact_s{x3_seed}"),
    benchmark:
        benchmark_path("x3audit", "bd_exact_s{x3_seed}")
    threads: 1
    resources:
        mem_mb=at_scale(1000, 8000),
        runtime=at_scale(5, 60),
    params:
        exact=X3_BD,
    script:
        "../scripts/x3audit/bd_exact.py"


rule x3audit_pa_lower_bound:
    input:
        code=script_code("x3audit/pa_lower_bound.py"),
    output:
        metrics=f"{X3_OUT}/pa_lower_bound/s{{x3_seed}}.json",
    log:
        log_path("x3audit", "pa_lower_bound_s{x3_seed}"),
    benchmark:
        benchmark_path("x3audit", "pa_lower_bound_s{x3_seed}")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=at_scale(5, 60),
    params:
        lower_bound=X3["pa_lower_bound"],
    script:
        "../scripts/x3audit/pa_lower_bound.py"


rule x3audit_pa_kn_grid:
    input:
        code=script_code("x3audit/pa_kn_grid.py"),
    output:
        metrics=f"{X3_OUT}/pa_kn_grid/s{{x3_seed}}.json",
    log:
        log_path("x3audit", "pa_kn_grid_s{x3_seed}"),
    benchmark:
        benchmark_path("x3audit", "pa_kn_grid_s{x3_seed}")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=at_scale(5, 60),
    params:
        grid=X3["pa_kn_grid"],
    script:
        "../scripts/x3audit/pa_kn_grid.py"


rule x3audit_pa_zooming:
    input:
        code=script_code("x3audit/pa_zooming.py"),
    output:
        metrics=f"{X3_OUT}/pa_zooming/s{{x3_seed}}.json",
    log:
        log_path("x3audit", "pa_zooming_s{x3_seed}"),
    benchmark:
        benchmark_path("x3audit", "pa_zooming_s{x3_seed}")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=at_scale(5, 120),
    params:
        zooming=X3["pa_zooming"],
    script:
        "../scripts/x3audit/pa_zooming.py"


rule x3audit_op_preference:
    input:
        code=script_code("x3audit/op_preference.py"),
    output:
        metrics=f"{X3_OUT}/op_preference/{{op_family}}.json",
    log:
        log_path("x3audit", "op_preference_{op_family}"),
    benchmark:
        benchmark_path("x3audit", "op_preference_{op_family}")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=at_scale(10, 120),
    params:
        spec=lambda wc: X3_OP["mdp"][wc.op_family],
        eps=X3_OP["behaviour_eps"],
        seeds=X3_OP["seeds"],
        n_grid=X3_OP["n_trajectories"],
        beta=X3_OP["bonus_scale"],
        bt=X3["op_preference"],
    script:
        "../scripts/x3audit/op_preference.py"


rule x3audit_figures:
    input:
        bd=x3_bd_files(),
        pa=x3_pa_files(),
        op=X3_OP_HORIZON,
        kn=x3_kn_files(),
        zoom=x3_zoom_files(),
        bt=x3_bt_files(),
        code=script_code("x3audit/figures.py"),
    output:
        bd=report(
            f"{X3_OUT}/figures/bd_exact.png",
            caption="../report/x3audit_bd_exact.rst",
            category="x3audit",
        ),
        pa=report(
            f"{X3_OUT}/figures/pa_lower_bound.png",
            caption="../report/x3audit_pa_lower_bound.rst",
            category="x3audit",
        ),
        op=report(
            f"{X3_OUT}/figures/op_horizon_gap.png",
            caption="../report/x3audit_op_horizon_gap.rst",
            category="x3audit",
        ),
        kn=report(
            f"{X3_OUT}/figures/pa_kn_grid.png",
            caption="../report/x3audit_pa_kn_grid.rst",
            category="x3audit",
        ),
        zoom=report(
            f"{X3_OUT}/figures/pa_zooming.png",
            caption="../report/x3audit_pa_zooming.rst",
            category="x3audit",
        ),
        bt=report(
            f"{X3_OUT}/figures/op_preference.png",
            caption="../report/x3audit_op_preference.rst",
            category="x3audit",
        ),
    log:
        log_path("x3audit", "figures"),
    benchmark:
        benchmark_path("x3audit", "figures")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/x3audit/figures.py"


rule x3audit_claims:
    input:
        bd=x3_bd_files(),
        pa=x3_pa_files(),
        op=X3_OP_HORIZON,
        kn=x3_kn_files(),
        zoom=x3_zoom_files(),
        bt=x3_bt_files(),
        figures=rules.x3audit_figures.output,
        declaration=f"{workflow.basedir}/src/methods/x3audit/claims.yaml",
        code=script_code("x3audit/claims.py"),
    output:
        claims=report(
            claims_path("x3audit"),
            caption="../report/claims.rst",
            category="x3audit",
            subcategory="claims",
        ),
        summary=f"{X3_OUT}/metrics_summary.json",
    log:
        log_path("x3audit", "claims"),
    benchmark:
        benchmark_path("x3audit", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE,
    script:
        "../scripts/x3audit/claims.py"


rule x3audit:
    input:
        rules.x3audit_claims.output.claims,
        rules.x3audit_figures.output,
