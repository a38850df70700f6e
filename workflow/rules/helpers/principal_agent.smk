# Config checks and input functions used by workflow/rules/principal_agent.smk (its rules live there).

PA = config["principal_agent"]
PA_OUT = paper_dir("principal_agent")
PA_FIGURES = ["regret_vs_T", "regret_vs_N", "lipschitz", "lower_bound"]


def _pa_require(key, values, needed):
    missing = [v for v in needed if v not in values]
    if missing:
        raise ValueError(
            f"config principal_agent.{key}: {values} lacks {missing}, which the claims compare "
            f"(src/methods/principal_agent/claims.yaml); add them."
        )


_pa_require("rate.algorithms", PA["rate"]["algorithms"], ["exp3_linear", "naive_grid"])
_pa_require(
    "sweep.algorithms", PA["sweep"]["algorithms"], ["exp3_linear", "exp3_candidates"]
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
