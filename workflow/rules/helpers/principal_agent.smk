# Config checks and input functions used by workflow/rules/principal_agent.smk (its rules live there).

PRINCIPAL_AGENT = config["principal_agent"]
PRINCIPAL_AGENT_OUT = paper_dir("principal_agent")
PRINCIPAL_AGENT_FIGURES = [
    "regret_vs_T",
    "regret_vs_N",
    "lipschitz",
    "lower_bound",
    "two_point",
    "hidden_subset",
    "zooming",
]


def _principal_agent_require(key, values, needed):
    missing = [v for v in needed if v not in values]
    if missing:
        raise ValueError(
            f"config principal_agent.{key}: {values} lacks {missing}, which the claims compare "
            f"(src/methods/principal_agent/claims.yaml); add them."
        )


_principal_agent_require(
    "rate.algorithms",
    PRINCIPAL_AGENT["rate"]["algorithms"],
    ["exp3_linear", "naive_grid"],
)
_principal_agent_require(
    "sweep.algorithms",
    PRINCIPAL_AGENT["sweep"]["algorithms"],
    ["exp3_linear", "exp3_candidates", "exp3_merged"],
)
_principal_agent_require(
    "lower_bound.algorithms",
    PRINCIPAL_AGENT["lower_bound"]["algorithms"],
    ["exp3_linear"],
)
if not set(PRINCIPAL_AGENT["lower_bound"]["algorithms"]) & {"naive_grid", "lipschitz"}:
    raise ValueError(
        "config principal_agent.lower_bound.algorithms: add a learner that does not know the "
        "responses (naive_grid or lipschitz); the lower-bound claims are about those."
    )
if (
    PRINCIPAL_AGENT["lower_bound"]["threshold_range"][0]
    >= PRINCIPAL_AGENT["lower_bound"]["threshold_range"][1]
):
    raise ValueError(
        "config principal_agent.lower_bound.threshold_range: [low, high] with low < high expected, "
        f"got {PRINCIPAL_AGENT['lower_bound']['threshold_range']}"
    )
_principal_agent_two_point = PRINCIPAL_AGENT["two_point"]
if (
    sorted(set(_principal_agent_two_point["horizons"]))
    != _principal_agent_two_point["horizons"]
    or len(_principal_agent_two_point["horizons"]) < 2
):
    raise ValueError(
        f"config principal_agent.two_point.horizons = {_principal_agent_two_point['horizons']}: give at least 2 distinct "
        "horizons in increasing order (the claims fit a slope over them)."
    )
_principal_agent_hidden = PRINCIPAL_AGENT["hidden_subset"]
if any(k < 2 or k % 2 for k in _principal_agent_hidden["types"]):
    raise ValueError(
        f"config principal_agent.hidden_subset.types = {_principal_agent_hidden['types']}: the hidden-subset family splits "
        "the types into two halves; give even numbers of types >= 2 (e.g. [2, 4, 8])."
    )
if (
    min(_principal_agent_hidden["arms"]) < 3
    or len(_principal_agent_hidden["types"]) * len(_principal_agent_hidden["arms"]) < 3
):
    raise ValueError(
        f"config principal_agent.hidden_subset: arms = {_principal_agent_hidden['arms']}, types = {_principal_agent_hidden['types']}: "
        "give arms >= 3 (one default arm and at least two serving arms) and at least 3 (K, N) points in all "
        "(the claim fits a slope over the grid)."
    )
_principal_agent_zooming = PRINCIPAL_AGENT["zooming"]
if (
    sorted(set(_principal_agent_zooming["horizons"]))
    != _principal_agent_zooming["horizons"]
    or len(_principal_agent_zooming["horizons"]) < 2
):
    raise ValueError(
        f"config principal_agent.zooming.horizons = {_principal_agent_zooming['horizons']}: give at least 2 distinct "
        "horizons in increasing order (the claim fits a slope over them)."
    )


def principal_agent_adversary_params():
    """Parameters of the arrival sequences, shared by every simulation step."""
    return dict(PRINCIPAL_AGENT["adversary"])


def principal_agent_group_files(pattern, seeds_key=None, **wildcards):
    """The seed-group files of one step (`pattern` under the paper's folder, with `{seeds}`), experiment-major
    and in seed order within an experiment; `seeds_key`: the config section whose own `seeds` the step runs
    (two_point, hidden_subset, zooming), else the paper's seeds."""
    seeds = (
        PRINCIPAL_AGENT[seeds_key]["seeds"] if seeds_key else PRINCIPAL_AGENT["seeds"]
    )
    return expand(
        f"{PRINCIPAL_AGENT_OUT}/{pattern}", **wildcards, seeds=seed_groups(seeds)
    )


def principal_agent_rate_files():
    return principal_agent_group_files(
        "rate/{pa_adversary}_{seeds}.json",
        pa_adversary=PRINCIPAL_AGENT["rate"]["adversaries"],
    )


def principal_agent_sweep_values(wildcards):
    key = {"arms": "n_arms_values", "types": "n_types_values"}[wildcards.pa_dimension]
    return PRINCIPAL_AGENT["sweep"][key]


def principal_agent_figure_files():
    return [
        f"{PRINCIPAL_AGENT_OUT}/figures/{name}.png" for name in PRINCIPAL_AGENT_FIGURES
    ]
