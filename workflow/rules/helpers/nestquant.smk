# Config checks and input functions used by workflow/rules/nestquant.smk (the rules live there).

NESTQUANT = config["nestquant"]
NESTQUANT_OUT = paper_dir("nestquant")
if NESTQUANT["claim_q"] not in NESTQUANT["synthetic"]["nestquant_q"]:
    raise ValueError(
        f"config nestquant.claim_q {NESTQUANT['claim_q']} must be one of nestquant.synthetic.nestquant_q "
        f"{NESTQUANT['synthetic']['nestquant_q']}"
    )
if len(NESTQUANT["quant"]["betas"]["weights"]) != 4:
    raise ValueError(
        "config nestquant.quant.betas.weights: the rate accounting of the synthetic step assumes 4 "
        f"scales (2 bits per 8-vector); got {len(NESTQUANT['quant']['betas']['weights'])}"
    )


def nestquant_seed_jobs():
    """The `{seeds}` values of the per-seed steps: one seed per job at every scale (`seed0`, ...); each
    seed is a job of its own already at the tiny scale, so the tiny jobs are those of before.
    """
    return [f"seed{s}" for s in NESTQUANT["seeds"]]


def nestquant_seed_files(kind):
    """The per-seed results of a step (synthetic, lm or minilm), in seed order; lm: nestquant.lm_seeds when set."""
    seeds = (
        NESTQUANT.get("lm_seeds", NESTQUANT["seeds"])
        if kind == "lm"
        else NESTQUANT["seeds"]
    )
    return expand(
        f"{NESTQUANT_OUT}/{kind}/{{seeds}}.json", seeds=[f"seed{s}" for s in seeds]
    )


def nestquant_figure_files():
    return [
        f"{NESTQUANT_OUT}/figures/synthetic.png",
        f"{NESTQUANT_OUT}/figures/quality.png",
    ]
