# Config checks and input functions used by workflow/rules/gaprompt.smk (its rules live there).

GA = config["gaprompt"]
GA_OUT = paper_dir("gaprompt")
GA_METHODS = list(GA["methods"])
GA_BUNNY = f"{RESOURCES}/gaprompt/{GA['data']['bunny']['filename']}"

for _sec in ("backbone", "paper_arch"):
    _a = GA[_sec]
    if _a["dim"] % _a["heads"]:
        raise ValueError(
            f"config gaprompt.{_sec}: dim ({_a['dim']}) must be divisible by heads ({_a['heads']}); "
            "change one of them."
        )
if GA["paper_arch"]["prompt_depth"] > GA["paper_arch"]["depth"]:
    raise ValueError(
        "config gaprompt.paper_arch.prompt_depth exceeds its depth; lower prompt_depth."
    )
_bb, _data = GA["backbone"], GA["data"]
if _data["kind"] == "procedural" and _bb["n_groups"] > _data["n_points"]:
    raise ValueError(
        f"config gaprompt.backbone.n_groups ({_bb['n_groups']}) exceeds gaprompt.data.n_points "
        f"({_data['n_points']}); lower n_groups or raise n_points."
    )
if _bb["group_size"] > _data["n_points"]:
    raise ValueError(
        "config gaprompt.backbone.group_size exceeds gaprompt.data.n_points; lower group_size."
    )
if _bb["n_groups"] < 4 or _bb["group_size"] < 2:
    raise ValueError(
        "config gaprompt.backbone: the shift prompter's second level needs n_groups >= 4 and group_size >= 2."
    )
if GA["adapt"]["prompt_depth"] > _bb["depth"]:
    raise ValueError(
        f"config gaprompt.adapt.prompt_depth ({GA['adapt']['prompt_depth']}) exceeds gaprompt.backbone.depth "
        f"({_bb['depth']}); lower prompt_depth."
    )
if _data["kind"] == "h5" and not all(_data["h5"].values()):
    raise ValueError(
        "config gaprompt.data.kind is h5 but gaprompt.data.h5.train / test is null; set both paths."
    )
if _data["kind"] == "datasets" and not _data["datasets"]["path"]:
    raise ValueError(
        "config gaprompt.data.kind is datasets but gaprompt.data.datasets.path is null; name the dataset."
    )
if _data["kind"] != "procedural" and not _bb["checkpoint"]:
    raise ValueError(
        "config gaprompt: real datasets carry no pre-training set here; set gaprompt.backbone.checkpoint "
        "(Point-MAE pretrain.pth) or use data.kind procedural."
    )
_n_train = 8 * _data["train_per_class"]
if _data["kind"] == "procedural" and _n_train < GA["adapt"]["batch"]:
    raise ValueError(
        f"config gaprompt.adapt.batch ({GA['adapt']['batch']}) exceeds the {_n_train} training clouds; "
        "lower batch or raise data.train_per_class."
    )
if "gaprompt" not in GA_METHODS:
    raise ValueError(
        "config gaprompt.methods must include gaprompt (the claims compare it with the others)."
    )


def ga_method_files(ext):
    return {m: f"{GA_OUT}/adapt/{m}.{ext}" for m in GA_METHODS}


def ga_figures():
    return [
        f"{GA_OUT}/figures/accuracy_vs_params.png",
        f"{GA_OUT}/figures/shift_prompter.png",
    ]


def ga_bunny_input(wc):
    """PyGSP's wheel (the bunny scan) when the procedural pre-training set includes bunny views."""
    d = GA["data"]
    return (
        {"bunny": GA_BUNNY}
        if d["kind"] == "procedural" and d["bunny"]["copies"] > 0
        else {}
    )
