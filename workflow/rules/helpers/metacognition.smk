# Config checks and input functions used by workflow/rules/metacognition.smk (its rules live there).

MC = config["metacognition"]
MC_OUT = paper_dir("metacognition")
_mc_env = MC["environment"]
if set(MC["tune_seeds"]) & set(MC["seeds"]):
    raise ValueError(
        "config metacognition.tune_seeds and metacognition.seeds overlap "
        f"({sorted(set(MC['tune_seeds']) & set(MC['seeds']))}); tuning and test worlds must differ"
    )
if _mc_env["switch_at"] is None:
    raise ValueError(
        "config metacognition.environment.switch_at: null leaves the recovery claim untestable; "
        "set a step (the stationary check is run separately)"
    )
for _key in ("switch_at", "new_family_at"):
    if _mc_env[_key] is not None and _mc_env[_key] >= _mc_env["steps"]:
        raise ValueError(
            f"config metacognition.environment.{_key}={_mc_env[_key]} must be below steps={_mc_env['steps']}"
        )
if _mc_env["rate_low"] > _mc_env["rate_high"]:
    raise ValueError(
        "config metacognition.environment: rate_low must not exceed rate_high "
        f"({_mc_env['rate_low']} > {_mc_env['rate_high']})"
    )


def mc_figures():
    return [f"{MC_OUT}/figures/{n}.png" for n in ("curves", "ablation")]
