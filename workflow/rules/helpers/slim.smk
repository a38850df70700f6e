# Config checks and input functions used by workflow/rules/slim.smk (the rules live there).

SL = config["slim"]
SL_OUT = paper_dir("slim")
for _name in SL["ladder"] + SL["extras"]:
    if _name not in SL["recipes"]:
        raise ValueError(
            f"config slim.ladder / slim.extras: {_name!r} is not a recipe of slim.recipes; "
            f"defined: {sorted(SL['recipes'])}"
        )
if list(SL["speed"]["claim_shape"]) not in [list(s) for s in SL["speed"]["shapes"]]:
    raise ValueError(
        f"config slim.speed.claim_shape {SL['speed']['claim_shape']} must be one of slim.speed.shapes"
    )
if 1 not in SL["speed"]["batch_sizes"]:
    raise ValueError(
        "config slim.speed.batch_sizes must contain 1 (the decode product the speedup claim reads)"
    )


def sl_recipe_names():
    return SL["ladder"] + SL["extras"]


def sl_lm_metrics():
    return expand(f"{SL_OUT}/lm/ladder_s{{seed}}.json", seed=SL["seeds"])


def sl_minilm_metrics():
    return expand(f"{SL_OUT}/minilm/ladder_s{{seed}}.json", seed=SL["seeds"])


def sl_figures():
    return [f"{SL_OUT}/figures/ladder.png", f"{SL_OUT}/figures/speed.png"]
