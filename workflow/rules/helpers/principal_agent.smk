# Config checks and input functions used by workflow/rules/principal_agent.smk (its rules live there).

PA = config["principal_agent"]
PA_OUT = paper_dir("principal_agent")
PA_FIGURES = [
    "regret_vs_T",
    "regret_vs_N",
    "lipschitz",
    "lower_bound",
    "two_point",
    "hidden_subset",
    "zooming",
]


def _pa_require(key, values, needed):
    missing = [v for v in needed if v not in values]
    if missing:
        raise ValueError(
            f"config principal_agent.{key}: {values} lacks {missing}, which the claims compare "
            f"(src/methods/principal_agent/claims.yaml); add them."
        )


_pa_require("rate.algorithms", PA["rate"]["algorithms"], ["exp3_linear", "naive_grid"])
_pa_require(
    "sweep.algorithms",
    PA["sweep"]["algorithms"],
    ["exp3_linear", "exp3_candidates", "exp3_merged"],
)
_pa_require("lower_bound.algorithms", PA["lower_bound"]["algorithms"], ["exp3_linear"])
if not set(PA["lower_bound"]["algorithms"]) & {"naive_grid", "lipschitz"}:
    raise ValueError(
        "config principal_agent.lower_bound.algorithms: add a learner that does not know the "
        "responses (naive_grid or lipschitz); the lower-bound claims are about those."
    )
if PA["lower_bound"]["threshold_range"][0] >= PA["lower_bound"]["threshold_range"][1]:
    raise ValueError(
        "config principal_agent.lower_bound.threshold_range: [low, high] with low < high expected, "
        f"got {PA['lower_bound']['threshold_range']}"
    )
_pa_two_point = PA["two_point"]
if sorted(set(_pa_two_point["horizons"])) != _pa_two_point["horizons"] or len(_pa_two_point["horizons"]) < 2:
    raise ValueError(
        f"config principal_agent.two_point.horizons = {_pa_two_point['horizons']}: give at least 2 distinct "
        "horizons in increasing order (the claims fit a slope over them)."
    )
_pa_hidden = PA["hidden_subset"]
if any(k < 2 or k % 2 for k in _pa_hidden["types"]):
    raise ValueError(
        f"config principal_agent.hidden_subset.types = {_pa_hidden['types']}: the hidden-subset family splits "
        "the types into two halves; give even numbers of types >= 2 (e.g. [2, 4, 8])."
    )
if min(_pa_hidden["arms"]) < 3 or len(_pa_hidden["types"]) * len(_pa_hidden["arms"]) < 3:
    raise ValueError(
        f"config principal_agent.hidden_subset: arms = {_pa_hidden['arms']}, types = {_pa_hidden['types']}: "
        "give arms >= 3 (one default arm and at least two serving arms) and at least 3 (K, N) points in all "
        "(the claim fits a slope over the grid)."
    )
_pa_zoom = PA["zooming"]
if sorted(set(_pa_zoom["horizons"])) != _pa_zoom["horizons"] or len(_pa_zoom["horizons"]) < 2:
    raise ValueError(
        f"config principal_agent.zooming.horizons = {_pa_zoom['horizons']}: give at least 2 distinct "
        "horizons in increasing order (the claim fits a slope over them)."
    )


def pa_adversary_params():
    """Parameters of the arrival sequences, shared by every simulation step."""
    return dict(PA["adversary"])


def pa_rate_records():
    return expand(
        f"{PA_OUT}/rate/{{pa_adversary}}.json", pa_adversary=PA["rate"]["adversaries"]
    )


def pa_sweep_values(wildcards):
    key = {"arms": "n_arms_values", "types": "n_types_values"}[wildcards.pa_dimension]
    return PA["sweep"][key]


def pa_figures():
    return [f"{PA_OUT}/figures/{name}.png" for name in PA_FIGURES]
