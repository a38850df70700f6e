# Neural guided diffusion bridges: "Neural Guided Diffusion Bridges", Yang, van der Meulen,
# Sommer, ICML 2025, arXiv 2502.11909. Guided proposals from a linear auxiliary process plus a
# neural drift correction trained by a variational (KL) loss; baselines: guided proposal with
# importance weights, pCN MCMC, the score-matching bridge of Heng et al., brute force.
#
# DAG ({seeds}: one group of all seeds at tiny and smoke scale, one per seed at paper scale):
#   neural_bridges_linear (process: brownian, ou; seeds) ──┐  closed-form bridges
#   neural_bridges_cell (event: normal, rare,              ├─> neural_bridges_figures ─┐
#                        multimodal; seeds) ───────────────┘                           ├─> neural_bridges_claims
#                                                          └───────────────────────────┘
#
# Config keys read: neural_bridges.{seeds, train, linear, cell} (documented in config.yaml, schema
# in workflow/schemas/neural_bridges.schema.yaml).
#
# Paper-scale resources (config/full.yaml: 5000 Adam steps through 400-500 Euler steps per path, pCN
# 16 chains x 20,000 iterations, 10^5 importance and brute-force paths): the bridges, the score network
# and pCN's path simulations run on the job's GPU, about an hour per seed and event on one GPU; the
# runtimes below leave a factor of three or more, and grow with each resubmission.


include: "helpers/neural_bridges.smk"


rule neural_bridges_linear:
    input:
        code=script_code("neural_bridges/linear.py"),
    output:
        metrics=f"{NEURAL_BRIDGES_OUT}/linear/{{process,brownian|ou}}_{{seeds}}.json",
        arrays=f"{NEURAL_BRIDGES_OUT}/linear/{{process,brownian|ou}}_{{seeds}}.npz",
    log:
        log_path("neural_bridges", "linear_{process}_{seeds}"),
    benchmark:
        benchmark_path("neural_bridges", "linear_{process}_{seeds}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(1000, 8000),
        runtime=runtime_per_attempt(5, 180),
        gpu=at_scale(0, 1),
    params:
        spec=lambda wc: NEURAL_BRIDGES["linear"]["processes"][wc.process],
        eps=NEURAL_BRIDGES["linear"]["eps"],
        seeds=lambda wc: group_seeds(wc.seeds, NEURAL_BRIDGES["seeds"]),
        hidden=NEURAL_BRIDGES["linear"]["hidden"],
        train=NEURAL_BRIDGES["train"],
        n_eval=NEURAL_BRIDGES["linear"]["n_eval"],
        eval_times=NEURAL_BRIDGES["linear"]["eval_times"],
    script:
        "../scripts/neural_bridges/linear.py"


rule neural_bridges_cell:
    input:
        code=script_code("neural_bridges/cell.py"),
    output:
        metrics=f"{NEURAL_BRIDGES_OUT}/cell/{{event,normal|rare|multimodal}}_{{seeds}}.json",
        arrays=f"{NEURAL_BRIDGES_OUT}/cell/{{event,normal|rare|multimodal}}_{{seeds}}.npz",
    log:
        log_path("neural_bridges", "cell_{event}_{seeds}"),
    benchmark:
        benchmark_path("neural_bridges", "cell_{event}_{seeds}")
    threads: at_scale(1, 4)
    resources:
        mem_mb=per_attempt(2000, 12000),
        runtime=runtime_per_attempt(10, 360),
        gpu=at_scale(0, 1),
    params:
        cell=NEURAL_BRIDGES["cell"],
        event=lambda wc: NEURAL_BRIDGES["cell"]["events"][wc.event],
        seeds=lambda wc: group_seeds(wc.seeds, NEURAL_BRIDGES["seeds"]),
        hidden=NEURAL_BRIDGES["cell"]["hidden"],
        train=NEURAL_BRIDGES["train"],
        eta=lambda wc: NEURAL_BRIDGES["cell"]["pcn"]["eta"][wc.event],
    script:
        "../scripts/neural_bridges/cell.py"


rule neural_bridges_figures:
    input:
        **{f"linear_{p}": f for p, f in neural_bridges_linear_files("npz").items()},
        **{f"cell_{e}": f for e, f in neural_bridges_cell_files("npz").items()},
        code=script_code("neural_bridges/figures.py"),
    output:
        linear=report(
            f"{NEURAL_BRIDGES_OUT}/figures/linear.png",
            caption="../report/neural_bridges_linear.rst",
            category="neural_bridges",
            subcategory="closed-form bridges",
        ),
        cell=report(
            f"{NEURAL_BRIDGES_OUT}/figures/cell.png",
            caption="../report/neural_bridges_cell.rst",
            category="neural_bridges",
            subcategory="cell model",
        ),
        linear_data=f"{NEURAL_BRIDGES_OUT}/figures/linear_marginals.csv",
    log:
        log_path("neural_bridges", "figures"),
    benchmark:
        benchmark_path("neural_bridges", "figures")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 15),
    params:
        processes=NEURAL_BRIDGES_PROCESSES,
        events=NEURAL_BRIDGES_EVENTS,
    script:
        "../scripts/neural_bridges/figures.py"


rule neural_bridges_claims:
    input:
        **{f"linear_{p}": f for p, f in neural_bridges_linear_files("json").items()},
        **{f"cell_{e}": f for e, f in neural_bridges_cell_files("json").items()},
        **{f"cell_arrays_{e}": f for e, f in neural_bridges_cell_files("npz").items()},
        figures=neural_bridges_figures(),
        declaration=f"{workflow.basedir}/src/methods/neural_bridges/claims.yaml",
        code=script_code("neural_bridges/claims.py"),
    output:
        claims=report(
            claims_path("neural_bridges"),
            caption="../report/claims.rst",
            category="neural_bridges",
            subcategory="claims",
        ),
        summary=f"{NEURAL_BRIDGES_OUT}/metrics_summary.json",
        metrics=f"{paper_dir('neural_bridges')}/metrics.json",
    log:
        log_path("neural_bridges", "claims"),
    benchmark:
        benchmark_path("neural_bridges", "claims")
    threads: 1
    resources:
        mem_mb=per_attempt(1000, 2000),
        runtime=runtime_per_attempt(5, 15),
    params:
        scale=SCALE,
        processes=NEURAL_BRIDGES_PROCESSES,
        events=NEURAL_BRIDGES_EVENTS,
    script:
        "../scripts/neural_bridges/claims.py"


rule neural_bridges:
    input:
        rules.neural_bridges_claims.output.claims,
        neural_bridges_figures(),
