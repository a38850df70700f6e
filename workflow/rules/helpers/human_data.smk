# Config checks and input functions used by workflow/rules/human_data.smk (its rules live there).

HD = config["human_data"]
HD_OUT = paper_dir("human_data")
# The claims read these designs and sweep points (src/methods/human_data/claims.yaml).
HD_REFERENCE = {
    "frontier_a": "piece_rate",
    "frontier_b": "quality_pay",
    "above": "game",
    "unpaid": "unpaid",
    "gap_designs": ["game", "piece_rate"],
}
for _param, _needed in {"kappa": [0.0, 0.03], "llm_cost": [0.05, 1.0]}.items():
    _missing = [v for v in _needed if v not in HD["sweep"]["values"][_param]]
    if _missing:
        raise ValueError(
            f"config human_data.sweep.values.{_param}: must contain {_needed} (the claims read them); "
            f"missing {_missing}"
        )
for _d in HD["sweep"]["designs"] + HD_REFERENCE["gap_designs"]:
    if _d not in HD["designs"]:
        raise ValueError(
            f"config human_data.sweep.designs: design {_d!r} is not in human_data.designs "
            f"{sorted(HD['designs'])} (the sweep must include {HD_REFERENCE['gap_designs']})"
        )
if HD["window"] * 2 > HD["world"]["rounds"]:
    raise ValueError(
        f"config human_data.window={HD['window']}: must be at most half of world.rounds "
        f"({HD['world']['rounds']}) so that early and late rounds do not overlap"
    )


def hd_figures():
    return [f"{HD_OUT}/figures/{n}.png" for n in ("over_time", "frontier", "sweep")]
