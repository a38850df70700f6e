# Config checks and input functions used by workflow/rules/alspec.smk (the rules live there).

ALSPEC = config["alspec"]
ALSPEC_OUT = paper_dir("alspec")
ALSPEC_TASKS = ["local", "recall", "copy"]
if 0.10 not in [round(x, 4) for x in ALSPEC["lams"]]:
    raise ValueError(
        f"config alspec.lams: {ALSPEC['lams']} must contain 0.10 (the paper's default λ; the claims read it)"
    )


def alspec_task_metrics():
    return expand(f"{ALSPEC_OUT}/metrics/{{task}}.json", task=ALSPEC_TASKS)


def alspec_figure_files():
    return [f"{ALSPEC_OUT}/figures/quality.png", f"{ALSPEC_OUT}/figures/timing.png"]
