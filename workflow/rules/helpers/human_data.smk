# Config checks and input functions used by workflow/rules/human_data.smk (its rules live there).

HUMAN_DATA = config["human_data"]
HUMAN_DATA_OUT = paper_dir("human_data")
# The claims read these designs and sweep points (src/methods/human_data/claims.yaml).
HUMAN_DATA_REFERENCE = {
    "frontier_a": "piece_rate",
    "frontier_b": "quality_pay",
    "above": "game",
    "unpaid": "unpaid",
    "gap_designs": ["game", "piece_rate"],
}
for _param, _needed in {"kappa": [0.0, 0.03], "llm_cost": [0.05, 1.0]}.items():
    _missing = [v for v in _needed if v not in HUMAN_DATA["sweep"]["values"][_param]]
    if _missing:
        raise ValueError(
            f"config human_data.sweep.values.{_param}: must contain {_needed} (the claims read them); "
            f"missing {_missing}"
        )
for _d in HUMAN_DATA["sweep"]["designs"] + HUMAN_DATA_REFERENCE["gap_designs"]:
    if _d not in HUMAN_DATA["designs"]:
        raise ValueError(
            f"config human_data.sweep.designs: design {_d!r} is not in human_data.designs "
            f"{sorted(HUMAN_DATA['designs'])} (the sweep must include {HUMAN_DATA_REFERENCE['gap_designs']})"
        )
if HUMAN_DATA["window"] * 2 > HUMAN_DATA["world"]["rounds"]:
    raise ValueError(
        f"config human_data.window={HUMAN_DATA['window']}: must be at most half of world.rounds "
        f"({HUMAN_DATA['world']['rounds']}) so that early and late rounds do not overlap"
    )


def human_data_simulation_files(name):
    """human_data_simulate's outputs `name` (with `{seeds}`), one per seed group, in seed order."""
    return expand(
        f"{HUMAN_DATA_OUT}/simulate/{name}", seeds=seed_groups(HUMAN_DATA["seeds"])
    )


def human_data_figure_files():
    return [
        f"{HUMAN_DATA_OUT}/figures/{n}.png" for n in ("over_time", "frontier", "sweep")
    ]
