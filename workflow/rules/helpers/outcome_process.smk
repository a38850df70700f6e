# Config checks and input functions used by workflow/rules/outcome_process.smk (its rules live there).

OUTCOME_PROCESS = config["outcome_process"]
OUTCOME_PROCESS_OUT = paper_dir("outcome_process")
OUTCOME_PROCESS_COVERAGE = OUTCOME_PROCESS["coverage"]
OUTCOME_PROCESS_CHAIN = {
    "n_states": OUTCOME_PROCESS_COVERAGE["n_states"],
    "n_actions": OUTCOME_PROCESS_COVERAGE["n_actions"],
}
OUTCOME_PROCESS_SWEEPS = ["horizon", "eps"]
OUTCOME_PROCESS_FAMILIES_RE = "|".join(OUTCOME_PROCESS["families"])

if (
    OUTCOME_PROCESS["prm"]["fork"]["late_reward"]
    >= OUTCOME_PROCESS["prm"]["fork"]["early_reward"]
):
    raise ValueError(
        "config outcome_process.prm.fork: late_reward must be below early_reward "
        f"(got {OUTCOME_PROCESS['prm']['fork']['late_reward']} >= {OUTCOME_PROCESS['prm']['fork']['early_reward']}); "
        "the early branch has to be the optimal one for the counterexample to mean anything."
    )
if OUTCOME_PROCESS_COVERAGE["n_states"] > OUTCOME_PROCESS_COVERAGE["n_actions"] ** min(
    OUTCOME_PROCESS_COVERAGE["horizons"]
):
    raise ValueError(
        "config outcome_process.coverage: n_states must be at most n_actions ** min(horizons) "
        "so that every chain state is reachable; lower n_states or raise the horizons."
    )


def outcome_process_sweep_points(sweep):
    """The (horizon, behaviour eps) points of one coverage sweep."""
    if sweep == "horizon":
        return [
            {"horizon": H, "eps": OUTCOME_PROCESS_COVERAGE["horizon_eps"]}
            for H in OUTCOME_PROCESS_COVERAGE["horizons"]
        ]
    return [
        {"horizon": OUTCOME_PROCESS_COVERAGE["eps_horizon"], "eps": e}
        for e in OUTCOME_PROCESS_COVERAGE["eps"]
    ]


def outcome_process_prm_specs():
    """MDP spec of each family of the process-reward experiment (random families share `mdp`)."""
    return {**OUTCOME_PROCESS["mdp"], "fork": OUTCOME_PROCESS["prm"]["fork"]}


def outcome_process_rate_files():
    """Family-major, in seed order within a family (the claims and figures merge the groups in that order)."""
    return expand(
        f"{OUTCOME_PROCESS_OUT}/rate/{{family}}_{{seeds}}.json",
        family=OUTCOME_PROCESS["families"],
        seeds=seed_groups(OUTCOME_PROCESS["seeds"]),
    )


def outcome_process_preference_files():
    return expand(
        f"{OUTCOME_PROCESS_OUT}/preference/{{family}}_{{seeds}}.json",
        family=OUTCOME_PROCESS["families"],
        seeds=seed_groups(OUTCOME_PROCESS["seeds"]),
    )


def outcome_process_sweep_files(sweep):
    """One coverage sweep's seed-group files, in seed order."""
    return expand(
        f"{OUTCOME_PROCESS_OUT}/coverage/{sweep}_{{seeds}}.json",
        seeds=seed_groups(OUTCOME_PROCESS["seeds"]),
    )


def outcome_process_samples_files():
    return expand(
        f"{OUTCOME_PROCESS_OUT}/coverage/samples_{{seeds}}.json",
        seeds=seed_groups(OUTCOME_PROCESS["seeds"]),
    )


def outcome_process_figure_files():
    return [
        f"{OUTCOME_PROCESS_OUT}/figures/{name}.png"
        for name in ("rate", "coverage", "lemma", "prm", "horizon_gap", "preference")
    ]
