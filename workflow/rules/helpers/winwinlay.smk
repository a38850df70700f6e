# Config checks and input functions used by workflow/rules/winwinlay.smk (its rules live there).

import re

WWL = config["winwinlay"]
WWL_OUT = paper_dir("winwinlay")
WWL_SEEDS = WWL["seeds"]
WWL_METHODS = WWL["methods"]

_wwl_data = WWL["data"]
if (_wwl_data["side"] // 8) ** 2 < _wwl_data["n_objects"]:
    raise ValueError(
        f"config winwinlay.data.side ({_wwl_data['side']}) cannot hold {_wwl_data['n_objects']} "
        "non-overlapping 8x8 digits; raise side (24 at tiny) or lower n_objects."
    )
if _wwl_data["side"] % 2:
    raise ValueError(
        f"config winwinlay.data.side ({_wwl_data['side']}) must be even (attention maps are at half resolution)."
    )
if _wwl_data["n_objects"] > 10:
    raise ValueError(
        "config winwinlay.data.n_objects must be at most 10 (objects have distinct digit classes)."
    )
_wwl_s = WWL["sampling"]
if _wwl_s["guided_steps"] > _wwl_s["ddim_steps"]:
    raise ValueError(
        f"config winwinlay.sampling.guided_steps ({_wwl_s['guided_steps']}) exceeds ddim_steps "
        f"({_wwl_s['ddim_steps']}); lower guided_steps."
    )
if _wwl_s["ddim_steps"] > WWL["model"]["n_timesteps"]:
    raise ValueError(
        "config winwinlay.sampling.ddim_steps must not exceed winwinlay.model.n_timesteps."
    )
if _wwl_s["n_grid"] > _wwl_s["n_samples"]:
    raise ValueError(
        "config winwinlay.sampling.n_grid must not exceed winwinlay.sampling.n_samples."
    )
if _wwl_s["n_samples"] < 3:
    raise ValueError(
        "config winwinlay.sampling.n_samples must be at least 3 (a Frechet distance needs a covariance)."
    )
for _name in ("lg", "winwinlay"):
    if _name not in WWL_METHODS:
        raise ValueError(
            f"config winwinlay.methods lacks {_name!r}, which the claims compare; add it back."
        )
if WWL["detector"]["pca_components"] > _wwl_data["side"] ** 2:
    raise ValueError(
        "config winwinlay.detector.pca_components exceeds the number of pixels of a canvas."
    )
_wwl_toy = WWL["toy"]
if (
    _wwl_toy["box_side"][0] > _wwl_toy["box_side"][1]
    or _wwl_toy["box_side"][1] > _wwl_toy["grid"]
):
    raise ValueError(
        "config winwinlay.toy.box_side must be [min, max] with min <= max <= grid."
    )


WWL_SD = WWL.get("sd")
if WWL_SD is not None:
    for _i, _layout in enumerate(WWL_SD["layouts"]):
        for _j, _obj in enumerate(_layout["objects"]):
            _x0, _y0, _x1, _y1 = _obj["box"]
            if not (_x0 < _x1 and _y0 < _y1):
                raise ValueError(
                    f"config winwinlay.sd.layouts[{_i}].objects[{_j}].box {_obj['box']} must be "
                    "[x0, y0, x1, y1] with x0 < x1 and y0 < y1 (fractions of the image)."
                )
            if _obj["token"].lower() not in re.findall(
                r"[\w']+", _layout["prompt"].lower()
            ):
                raise ValueError(
                    f"config winwinlay.sd.layouts[{_i}].objects[{_j}].token {_obj['token']!r} is not a word "
                    f"of the prompt {_layout['prompt']!r}; name a word of the prompt."
                )
    if WWL_SD["map_res"] * min(WWL_SD["height"], WWL_SD["width"]) < max(
        WWL_SD["height"], WWL_SD["width"]
    ):
        raise ValueError(
            "config winwinlay.sd.map_res is too small for the image's aspect ratio; raise it (16 for 512x512)."
        )


def wwl_sd_files():
    if WWL_SD is None:
        return []
    return [f"{WWL_OUT}/sd/seed{s}.{ext}" for s in WWL_SEEDS for ext in ("json", "npz")]


def wwl_guide_files(ext):
    return [f"{WWL_OUT}/guide/seed{s}.{ext}" for s in WWL_SEEDS]


def wwl_figures():
    return [
        f"{WWL_OUT}/figures/toy_maps.png",
        f"{WWL_OUT}/figures/samples.png",
        f"{WWL_OUT}/figures/tradeoff.png",
    ]
