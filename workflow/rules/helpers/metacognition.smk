# Config checks and input functions used by workflow/rules/metacognition.smk (its rules live there).

METACOGNITION = config["metacognition"]
METACOGNITION_OUT = paper_dir("metacognition")
_metacognition_environment = METACOGNITION["environment"]
if set(METACOGNITION["tune_seeds"]) & set(METACOGNITION["seeds"]):
    raise ValueError(
        "config metacognition.tune_seeds and metacognition.seeds overlap "
        f"({sorted(set(METACOGNITION['tune_seeds']) & set(METACOGNITION['seeds']))}); tuning and test worlds must differ"
    )
if _metacognition_environment["switch_at"] is None:
    raise ValueError(
        "config metacognition.environment.switch_at: null leaves the recovery claim untestable; "
        "set a step (the stationary check is run separately)"
    )
for _key in ("switch_at", "new_family_at"):
    if (
        _metacognition_environment[_key] is not None
        and _metacognition_environment[_key] >= _metacognition_environment["steps"]
    ):
        raise ValueError(
            f"config metacognition.environment.{_key}={_metacognition_environment[_key]} must be below steps={_metacognition_environment['steps']}"
        )
if _metacognition_environment["rate_low"] > _metacognition_environment["rate_high"]:
    raise ValueError(
        "config metacognition.environment: rate_low must not exceed rate_high "
        f"({_metacognition_environment['rate_low']} > {_metacognition_environment['rate_high']})"
    )


def metacognition_evaluation_files(name):
    """metacognition_evaluate's outputs `name` (with `{seeds}`), one per seed group, in seed order."""
    return expand(
        f"{METACOGNITION_OUT}/experiment/{name}",
        seeds=seed_groups(METACOGNITION["seeds"]),
    )


def metacognition_figure_files():
    return [f"{METACOGNITION_OUT}/figures/{n}.png" for n in ("curves", "ablation")]
