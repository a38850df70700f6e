# Config checks and input functions used by workflow/rules/outcome_process.smk (its rules live there).

OP = config["outcome_process"]
OP_OUT = paper_dir("outcome_process")
OP_COV = OP["coverage"]
OP_CHAIN = {"n_states": OP_COV["n_states"], "n_actions": OP_COV["n_actions"]}
OP_SWEEPS = ["horizon", "eps"]
OP_FAMILIES_RE = "|".join(OP["families"])

if OP["prm"]["fork"]["late_reward"] >= OP["prm"]["fork"]["early_reward"]:
    raise ValueError(
        "config outcome_process.prm.fork: late_reward must be below early_reward "
        f"(got {OP['prm']['fork']['late_reward']} >= {OP['prm']['fork']['early_reward']}); "
        "the early branch has to be the optimal one for the counterexample to mean anything."
    )
if OP_COV["n_states"] > OP_COV["n_actions"] ** min(OP_COV["horizons"]):
    raise ValueError(
        "config outcome_process.coverage: n_states must be at most n_actions ** min(horizons) "
        "so that every chain state is reachable; lower n_states or raise the horizons."
    )


def op_sweep_points(sweep):
    """The (horizon, behaviour eps) points of one coverage sweep."""
    if sweep == "horizon":
        return [
            {"horizon": H, "eps": OP_COV["horizon_eps"]} for H in OP_COV["horizons"]
        ]
    return [{"horizon": OP_COV["eps_horizon"], "eps": e} for e in OP_COV["eps"]]


def op_prm_specs():
    """MDP spec of each family of the process-reward experiment (random families share `mdp`)."""
    return {**OP["mdp"], "fork": OP["prm"]["fork"]}


def op_rate_files():
    return expand(f"{OP_OUT}/rate/{{family}}.json", family=OP["families"])


def op_preference_files():
    return expand(f"{OP_OUT}/preference/{{family}}.json", family=OP["families"])


def op_sweep_files():
    return {s: f"{OP_OUT}/coverage/{s}.json" for s in OP_SWEEPS}


def op_figures():
    return [
        f"{OP_OUT}/figures/{name}.png"
        for name in ("rate", "coverage", "lemma", "prm", "horizon_gap", "preference")
    ]
