# Config checks and input functions used by workflow/rules/nestquant.smk (the rules live there).

NQ = config["nestquant"]
NQ_OUT = paper_dir("nestquant")
if NQ["claim_q"] not in NQ["synthetic"]["nestquant_q"]:
    raise ValueError(
        f"config nestquant.claim_q {NQ['claim_q']} must be one of nestquant.synthetic.nestquant_q "
        f"{NQ['synthetic']['nestquant_q']}"
    )
if len(NQ["quant"]["betas"]["weights"]) != 4:
    raise ValueError(
        "config nestquant.quant.betas.weights: the rate accounting of the synthetic step assumes 4 "
        f"scales (2 bits per 8-vector); got {len(NQ['quant']['betas']['weights'])}"
    )


def nq_per_seed(kind):
    return expand(f"{NQ_OUT}/{kind}/s{{seed}}.json", seed=NQ["seeds"])


def nq_figures():
    return [f"{NQ_OUT}/figures/synthetic.png", f"{NQ_OUT}/figures/quality.png"]
