# Config checks and input functions used by workflow/rules/winwinlay.smk (its rules live there).

import re

WINWINLAY = config["winwinlay"]
WINWINLAY_OUT = paper_dir("winwinlay")
WINWINLAY_SEEDS = WINWINLAY["seeds"]
WINWINLAY_METHODS = WINWINLAY["methods"]

_winwinlay_data = WINWINLAY["data"]
if (_winwinlay_data["side"] // 8) ** 2 < _winwinlay_data["n_objects"]:
    raise ValueError(
        f"config winwinlay.data.side ({_winwinlay_data['side']}) cannot hold {_winwinlay_data['n_objects']} "
        "non-overlapping 8x8 digits; raise side (24 at tiny) or lower n_objects."
    )
if _winwinlay_data["side"] % 2:
    raise ValueError(
        f"config winwinlay.data.side ({_winwinlay_data['side']}) must be even (attention maps are at half resolution)."
    )
if _winwinlay_data["n_objects"] > 10:
    raise ValueError(
        "config winwinlay.data.n_objects must be at most 10 (objects have distinct digit classes)."
    )
_winwinlay_s = WINWINLAY["sampling"]
if _winwinlay_s["guided_steps"] > _winwinlay_s["ddim_steps"]:
    raise ValueError(
        f"config winwinlay.sampling.guided_steps ({_winwinlay_s['guided_steps']}) exceeds ddim_steps "
        f"({_winwinlay_s['ddim_steps']}); lower guided_steps."
    )
if _winwinlay_s["ddim_steps"] > WINWINLAY["model"]["n_timesteps"]:
    raise ValueError(
        "config winwinlay.sampling.ddim_steps must not exceed winwinlay.model.n_timesteps."
    )
if _winwinlay_s["n_grid"] > _winwinlay_s["n_samples"]:
    raise ValueError(
        "config winwinlay.sampling.n_grid must not exceed winwinlay.sampling.n_samples."
    )
if _winwinlay_s["n_samples"] < 3:
    raise ValueError(
        "config winwinlay.sampling.n_samples must be at least 3 (a Frechet distance needs a covariance)."
    )
for _name in ("lg", "winwinlay"):
    if _name not in WINWINLAY_METHODS:
        raise ValueError(
            f"config winwinlay.methods lacks {_name!r}, which the claims compare; add it back."
        )
if WINWINLAY["detector"]["pca_components"] > _winwinlay_data["side"] ** 2:
    raise ValueError(
        "config winwinlay.detector.pca_components exceeds the number of pixels of a canvas."
    )
_winwinlay_toy = WINWINLAY["toy"]
if (
    _winwinlay_toy["box_side"][0] > _winwinlay_toy["box_side"][1]
    or _winwinlay_toy["box_side"][1] > _winwinlay_toy["grid"]
):
    raise ValueError(
        "config winwinlay.toy.box_side must be [min, max] with min <= max <= grid."
    )


WINWINLAY_SD = WINWINLAY.get("sd")
if WINWINLAY_SD is not None:
    for _i, _layout in enumerate(WINWINLAY_SD["layouts"]):
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
    if WINWINLAY_SD["map_res"] * min(
        WINWINLAY_SD["height"], WINWINLAY_SD["width"]
    ) < max(WINWINLAY_SD["height"], WINWINLAY_SD["width"]):
        raise ValueError(
            "config winwinlay.sd.map_res is too small for the image's aspect ratio; raise it (16 for 512x512)."
        )


def winwinlay_sd_files():
    if WINWINLAY_SD is None:
        return []
    return [
        f"{WINWINLAY_OUT}/sd/seed{s}.{ext}"
        for s in WINWINLAY_SEEDS
        for ext in ("json", "npz")
    ]


def winwinlay_guide_files(ext):
    """One guide job per seed at every scale (in seed order)."""
    return [f"{WINWINLAY_OUT}/guide/seed{s}.{ext}" for s in WINWINLAY_SEEDS]


def winwinlay_figures():
    return [
        f"{WINWINLAY_OUT}/figures/toy_maps.png",
        f"{WINWINLAY_OUT}/figures/samples.png",
        f"{WINWINLAY_OUT}/figures/tradeoff.png",
        f"{WINWINLAY_OUT}/figures/tradeoff.csv",
    ]


def winwinlay_weights_folder(model_id):
    """Where winwinlay_sd_download puts a Hub model's weights (resources/winwinlay/sd/<owner>--<name>)."""
    return f"{RESOURCES}/winwinlay/sd/{'--'.join(Path(model_id).parts)}"


# The Stable Diffusion weights the GPU jobs load: a local diffusers folder as sd.model_id is used as it is; a Hub
# id is fetched by winwinlay_sd_download on the submit host first.
WINWINLAY_SD_DOWNLOAD = winwinlay_weights_folder(
    WINWINLAY_SD["model_id"] if WINWINLAY_SD else "unset"
)
WINWINLAY_SD_WEIGHTS = (
    WINWINLAY_SD["model_id"]
    if WINWINLAY_SD and Path(WINWINLAY_SD["model_id"]).is_dir()
    else WINWINLAY_SD_DOWNLOAD
)


def winwinlay_sd_token(wc):
    """A gated model (sd.gated: true) needs a Hugging Face token: the dry run says how to get one. Stable
    Diffusion 1.5 (config/full.yaml) is not gated."""
    if WINWINLAY_SD and WINWINLAY_SD.get("gated"):
        hf_token_for(WINWINLAY_SD["model_id"])(wc)
    return {}
