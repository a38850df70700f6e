# Position: When Incentives Backfire, Data Stops Being Human. Santy, Bhattacharya, Horta Ribeiro,
# Allen, Oh; ICML 2025 position track, arXiv 2502.07732. No experiments in the paper: an agent-based
# model operationalises its argument (illustrative; every assumption a config key).
#
# DAG:
#   human_data_simulate (every design and the sensitivity sweep, per seed group) ─┬─> human_data_figures ─┐
#                                                                                  └──────────────────────┴─> human_data_claims
#
# Seeds: the simulation runs one seed group per job ({seeds}: all seeds in one job at tiny scale, one seed per
# job at paper scale); figures and claims merge the groups in seed order. numpy on the CPU, one thread: no GPU.
#
# Config keys read: human_data.{seeds, window, population, world, designs, sweep}
# (documented in config.yaml, schema in workflow/schemas/human_data.schema.yaml).


include: "helpers/human_data.smk"


rule human_data_simulate:
    input:
        code=script_code("human_data/simulate.py"),
    output:
        outcomes=f"{HUMAN_DATA_OUT}/simulate/{{seeds}}.json",
        curves=f"{HUMAN_DATA_OUT}/simulate/{{seeds}}_curves.npz",
    log:
        log_path("human_data", "simulate_{seeds}"),
    benchmark:
        benchmark_path("human_data", "simulate_{seeds}")
    # paper scale, one seed: 4 designs plus 18 sweep points x 4 designs, 5,000 contributors x 200 rounds each
    # measured here: one simulation at full scale took 0.18 s CPU (76 per seed)
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(10, 30),
    params:
        designs=HUMAN_DATA["designs"],
        world=HUMAN_DATA["world"],
        population=HUMAN_DATA["population"],
        seeds=lambda wc: group_seeds(wc.seeds, HUMAN_DATA["seeds"]),
        window=HUMAN_DATA["window"],
        sweep=HUMAN_DATA["sweep"],
    script:
        "../scripts/human_data/simulate.py"


rule human_data_figures:
    input:
        outcomes=human_data_simulation_files("{seeds}.json"),
        curves=human_data_simulation_files("{seeds}_curves.npz"),
        code=script_code("human_data/figures.py"),
    output:
        over_time=report(
            f"{HUMAN_DATA_OUT}/figures/over_time.png",
            caption="../report/human_data_over_time.rst",
            category="human_data",
            subcategory="illustrative simulation",
        ),
        over_time_data=f"{HUMAN_DATA_OUT}/figures/over_time.csv",
        frontier=report(
            f"{HUMAN_DATA_OUT}/figures/frontier.png",
            caption="../report/human_data_frontier.rst",
            category="human_data",
            subcategory="illustrative simulation",
        ),
        sweep=report(
            f"{HUMAN_DATA_OUT}/figures/sweep.png",
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
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 10),
    script:
        "../scripts/human_data/figures.py"


rule human_data_claims:
    input:
        outcomes=human_data_simulation_files("{seeds}.json"),
        figures=human_data_figure_files(),
        declaration=f"{workflow.basedir}/src/methods/human_data/claims.yaml",
        code=script_code("human_data/claims.py"),
    output:
        claims=report(
            claims_path("human_data"),
            caption="../report/claims.rst",
            category="human_data",
            subcategory="claims",
        ),
        summary=f"{HUMAN_DATA_OUT}/metrics_summary.json",
        metrics=f"{paper_dir('human_data')}/metrics.json",
    log:
        log_path("human_data", "claims"),
    benchmark:
        benchmark_path("human_data", "claims")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 10),
    params:
        reference=HUMAN_DATA_REFERENCE,
        scale=SCALE,
    script:
        "../scripts/human_data/claims.py"


rule human_data:
    input:
        rules.human_data_claims.output.claims,
        human_data_figure_files(),
