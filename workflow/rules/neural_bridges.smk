# Neural guided diffusion bridges: "Neural Guided Diffusion Bridges", Yang, van der Meulen,
# Sommer, ICML 2025, arXiv 2502.11909. Guided proposals from a linear auxiliary process plus a
# neural drift correction trained by a variational (KL) loss; baselines: guided proposal with
# importance weights, pCN MCMC, the score-matching bridge of Heng et al., brute force.
#
# DAG:
#   neural_bridges_linear (process: brownian, ou) ──┐  closed-form bridges
#   neural_bridges_cell (event: normal, rare,       ├─> neural_bridges_figures ─┐
#                        multimodal) ───────────────┘                           ├─> neural_bridges_claims
#                                                   └───────────────────────────┘
#
# Config keys read: neural_bridges.{seeds, train, linear, cell} (documented in config.yaml, schema
# in workflow/schemas/neural_bridges.schema.yaml).


include: "helpers/neural_bridges.smk"


rule neural_bridges_linear:
    input:
        code=script_code("neural_bridges/linear.py"),
    output:
        metrics=f"{NB_OUT}/linear/{{process,brownian|ou}}.json",
        arrays=f"{NB_OUT}/linear/{{process,brownian|ou}}.npz",
    log:
        log_path("neural_bridges", "linear_{process}"),
    benchmark:
        benchmark_path("neural_bridges", "linear_{process}")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=at_scale(5, 240),
    params:
        spec=lambda wc: NB["linear"]["processes"][wc.process],
        eps=NB["linear"]["eps"],
        seeds=NB["seeds"],
        hidden=NB["linear"]["hidden"],
        train=NB["train"],
        n_eval=NB["linear"]["n_eval"],
        eval_times=NB["linear"]["eval_times"],
    script:
        "../scripts/neural_bridges/linear.py"


rule neural_bridges_cell:
    input:
        code=script_code("neural_bridges/cell.py"),
    output:
        metrics=f"{NB_OUT}/cell/{{event,normal|rare|multimodal}}.json",
        arrays=f"{NB_OUT}/cell/{{event,normal|rare|multimodal}}.npz",
    log:
        log_path("neural_bridges", "cell_{event}"),
    benchmark:
        benchmark_path("neural_bridges", "cell_{event}")
    threads: 1
    resources:
        mem_mb=2000,
        runtime=at_scale(10, 600),
    params:
        cell=NB["cell"],
        event=lambda wc: NB["cell"]["events"][wc.event],
        seeds=NB["seeds"],
        hidden=NB["cell"]["hidden"],
        train=NB["train"],
        eta=lambda wc: NB["cell"]["pcn"]["eta"][wc.event],
    script:
        "../scripts/neural_bridges/cell.py"


rule neural_bridges_figures:
    input:
        **{f"linear_{p}": f for p, f in nb_linear_files("npz").items()},
        **{f"cell_{e}": f for e, f in nb_cell_files("npz").items()},
        code=script_code("neural_bridges/figures.py"),
    output:
        linear=report(
            f"{NB_OUT}/figures/linear.png",
            caption="../report/neural_bridges_linear.rst",
            category="neural_bridges",
            subcategory="closed-form bridges",
        ),
        cell=report(
            f"{NB_OUT}/figures/cell.png",
            caption="../report/neural_bridges_cell.rst",
            category="neural_bridges",
            subcategory="cell model",
        ),
    log:
        log_path("neural_bridges", "figures"),
    benchmark:
        benchmark_path("neural_bridges", "figures")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        processes=NB_PROCESSES,
        events=NB_EVENTS,
    script:
        "../scripts/neural_bridges/figures.py"


rule neural_bridges_claims:
    input:
        **{f"linear_{p}": f for p, f in nb_linear_files("json").items()},
        **{f"cell_{e}": f for e, f in nb_cell_files("json").items()},
        figures=nb_figures(),
        declaration=f"{workflow.basedir}/src/methods/neural_bridges/claims.yaml",
        code=script_code("neural_bridges/claims.py"),
    output:
        claims=report(
            claims_path("neural_bridges"),
            caption="../report/claims.rst",
            category="neural_bridges",
            subcategory="claims",
        ),
        summary=f"{NB_OUT}/metrics_summary.json",
    log:
        log_path("neural_bridges", "claims"),
    benchmark:
        benchmark_path("neural_bridges", "claims")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        scale=SCALE,
        processes=NB_PROCESSES,
        events=NB_EVENTS,
    script:
        "../scripts/neural_bridges/claims.py"


rule neural_bridges:
    input:
        rules.neural_bridges_claims.output.claims,
        nb_figures(),
