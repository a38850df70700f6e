# Config checks and input functions used by workflow/rules/slim.smk (the rules live there).

from methods.slim.recipe import Recipe as SlimRecipe

SLIM = config["slim"]
SLIM_OUT = paper_dir("slim")
for _name, _recipe in SLIM["recipes"].items():
    try:
        SlimRecipe.from_dict(dict(_recipe))
    except (TypeError, ValueError) as _e:
        raise ValueError(f"config slim.recipes.{_name}: {_e}") from None
for _name in SLIM["ladder"] + SLIM["extras"]:
    if _name not in SLIM["recipes"]:
        raise ValueError(
            f"config slim.ladder / slim.extras: {_name!r} is not a recipe of slim.recipes; "
            f"defined: {sorted(SLIM['recipes'])}"
        )
if list(SLIM["speed"]["claim_shape"]) not in [list(s) for s in SLIM["speed"]["shapes"]]:
    raise ValueError(
        f"config slim.speed.claim_shape {SLIM['speed']['claim_shape']} must be one of slim.speed.shapes"
    )
if 1 not in SLIM["speed"]["batch_sizes"]:
    raise ValueError(
        "config slim.speed.batch_sizes must contain 1 (the decode product the speedup claim reads)"
    )


def slim_recipe_names():
    return SLIM["ladder"] + SLIM["extras"]


def slim_seed_jobs():
    """The `{seeds}` values of the ladder steps: one calibration seed per job at every scale (`seed0`, ...);
    a seed's ladder is a job of its own already at the tiny scale, so the tiny jobs are those of before.
    """
    return [f"seed{s}" for s in SLIM["seeds"]]


def slim_ladder_files(model):
    """The per-seed ladder results of `model` (lm or minilm), in seed order."""
    return expand(f"{SLIM_OUT}/{model}/ladder_{{seeds}}.json", seeds=slim_seed_jobs())


def slim_figure_files():
    return [f"{SLIM_OUT}/figures/ladder.png", f"{SLIM_OUT}/figures/speed.png"]
