# Position: When Incentives Backfire, Data Stops Being Human. Santy, Bhattacharya, Horta Ribeiro,
# Allen, Oh; ICML 2025 position track, arXiv 2502.07732. No experiments in the paper: an agent-based
# model operationalises its argument (illustrative; every assumption a config key).
#
# DAG:
#   human_data_simulate (every design x seed, and the sensitivity sweep) ─┬─> human_data_figures ─┐
#                                                                          └──────────────────────┴─> human_data_claims
#
# Config keys read: human_data.{seeds, window, population, world, designs, sweep}
# (documented in config.yaml, schema in workflow/schemas/human_data.schema.yaml).


include: "helpers/human_data.smk"


rule human_data_simulate:
    input:
        code=script_code("human_data/simulate.py"),
    output:
        metrics=f"{HD_OUT}/metrics.json",
        curves=f"{HD_OUT}/curves.npz",
    log:
        log_path("human_data", "simulate"),
    benchmark:
        benchmark_path("human_data", "simulate")
    threads: 1
    resources:
        mem_mb=at_scale(1000, 8000),
        runtime=at_scale(10, 120),
    params:
        designs=HD["designs"],
        world=HD["world"],
        population=HD["population"],
        seeds=HD["seeds"],
        window=HD["window"],
        sweep=HD["sweep"],
    script:
        "../scripts/human_data/simulate.py"


rule human_data_figures:
    input:
        metrics=rules.human_data_simulate.output.metrics,
        curves=rules.human_data_simulate.output.curves,
        code=script_code("human_data/figures.py"),
    output:
        over_time=report(
            f"{HD_OUT}/figures/over_time.png",
            caption="../report/human_data_over_time.rst",
            category="human_data",
            subcategory="illustrative simulation",
        ),
        frontier=report(
            f"{HD_OUT}/figures/frontier.png",
            caption="../report/human_data_frontier.rst",
            category="human_data",
            subcategory="illustrative simulation",
        ),
        sweep=report(
            f"{HD_OUT}/figures/sweep.png",
            caption="../report/human_data_sweep.rst",
            category="human_data",
            subcategory="sensitivity",
        ),
    log:
        log_path("human_data", "figures"),
    benchmark:
        benchmark_path("human_data", "figures")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/human_data/figures.py"


rule human_data_claims:
    input:
        metrics=rules.human_data_simulate.output.metrics,
        figures=hd_figures(),
        declaration=f"{workflow.basedir}/src/methods/human_data/claims.yaml",
        code=script_code("human_data/claims.py"),
    output:
        claims=report(
            claims_path("human_data"),
            caption="../report/claims.rst",
            category="human_data",
            subcategory="claims",
        ),
        summary=f"{HD_OUT}/metrics_summary.json",
    log:
        log_path("human_data", "claims"),
    benchmark:
        benchmark_path("human_data", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        reference=HD_REFERENCE,
        scale=SCALE,
    script:
        "../scripts/human_data/claims.py"


rule human_data:
    input:
        rules.human_data_claims.output.claims,
        hd_figures(),
