# Config checks and input functions used by workflow/rules/gaprompt.smk (its rules live there).

GAPROMPT = config["gaprompt"]
GAPROMPT_OUT = paper_dir("gaprompt")
GAPROMPT_METHODS = list(GAPROMPT["methods"])
GAPROMPT_BUNNY = f"{RESOURCES}/gaprompt/{GAPROMPT['data']['bunny']['filename']}"
GAPROMPT_SEED_GROUPS = seed_groups(GAPROMPT["seeds"])

for _sec in ("backbone", "paper_arch"):
    _a = GAPROMPT[_sec]
    if _a["dim"] % _a["heads"]:
        raise ValueError(
            f"config gaprompt.{_sec}: dim ({_a['dim']}) must be divisible by heads ({_a['heads']}); "
            "change one of them."
        )
if GAPROMPT["paper_arch"]["prompt_depth"] > GAPROMPT["paper_arch"]["depth"]:
    raise ValueError(
        "config gaprompt.paper_arch.prompt_depth exceeds its depth; lower prompt_depth."
    )
_bb, _data = GAPROMPT["backbone"], GAPROMPT["data"]
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
if GAPROMPT["adapt"]["prompt_depth"] > _bb["depth"]:
    raise ValueError(
        f"config gaprompt.adapt.prompt_depth ({GAPROMPT['adapt']['prompt_depth']}) exceeds gaprompt.backbone.depth "
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
if _data["kind"] == "procedural" and _n_train < GAPROMPT["adapt"]["batch"]:
    raise ValueError(
        f"config gaprompt.adapt.batch ({GAPROMPT['adapt']['batch']}) exceeds the {_n_train} training clouds; "
        "lower batch or raise data.train_per_class."
    )
if "gaprompt" not in GAPROMPT_METHODS:
    raise ValueError(
        "config gaprompt.methods must include gaprompt (the claims compare it with the others)."
    )

# gaprompt_pretrain trains (Point-MAE masked reconstruction, GPU-shaped) only without a released checkpoint;
# with one (config/full.yaml) it only loads the file into the backbone: no GPU, one thread.
GAPROMPT_PRETRAINS = not _bb["checkpoint"]
GAPROMPT_PRETRAIN_GPU = 1 if GAPROMPT_PRETRAINS else 0
GAPROMPT_PRETRAIN_THREADS = 4 if GAPROMPT_PRETRAINS else 1


def gaprompt_adapt_files(method, ext):
    """One method's gaprompt_adapt outputs, one per seed group, in seed order."""
    return expand(
        f"{GAPROMPT_OUT}/adapt/{method}_{{seeds}}.{ext}", seeds=GAPROMPT_SEED_GROUPS
    )


def gaprompt_adapt_inputs():
    """Named inputs adapt_<method>: every method's per-seed-group JSON files."""
    return {f"adapt_{m}": gaprompt_adapt_files(m, "json") for m in GAPROMPT_METHODS}


def gaprompt_figures():
    return [
        f"{GAPROMPT_OUT}/figures/accuracy_vs_params.png",
        f"{GAPROMPT_OUT}/figures/accuracy_vs_params.csv",
        f"{GAPROMPT_OUT}/figures/shift_prompter.png",
    ]


def gaprompt_bunny_input(wc):
    """PyGSP's wheel (the bunny scan) when the procedural pre-training set includes bunny views."""
    d = GAPROMPT["data"]
    return (
        {"bunny": GAPROMPT_BUNNY}
        if d["kind"] == "procedural" and d["bunny"]["copies"] > 0
        else {}
    )


SCANOBJECTNN_HOW = (
    "ScanObjectNN is distributed after its licence form: fill it in at hkust-vgd.github.io/scanobjectnn, download "
    "h5_files.zip from the link you are sent and unzip it into resources/gaprompt/ (the paper's hardest variant, "
    "PB_T50_RS, is main_split/*_objectdataset_augmentedrot_scale75.h5), or point gaprompt.data.h5.{split} at the file."
)


def gaprompt_dataset_files(wc):
    """The paper's dataset files (data.kind h5: ScanObjectNN, licence-gated), checked before anything runs."""
    d = GAPROMPT["data"]
    if d["kind"] != "h5":
        return {}
    files = {
        f"h5_{split}": prerequisite(
            d["h5"][split],
            f"ScanObjectNN's {split} h5 file (gaprompt.data.h5.{split})",
            SCANOBJECTNN_HOW.format(split=split),
        )(wc)
        for split in ("train", "test")
    }
    return {
        k: v for k, v in files.items() if v
    }  # none when only the DAG's shape is read


def gaprompt_checkpoint(wc):
    """Point-MAE's released pre-training checkpoint (backbone.checkpoint, paper scale), checked before anything runs."""
    path = GAPROMPT["backbone"]["checkpoint"]
    if not path:
        return {}
    found = prerequisite(
        path,
        "Point-MAE's pre-trained checkpoint pretrain.pth (gaprompt.backbone.checkpoint)",
        "Download pretrain.pth from the Point-MAE repository's release "
        "(github.com/Pang-Yatian/Point-MAE, README 'Pretrained Models') and save it at that path, "
        "or point gaprompt.backbone.checkpoint at your copy.",
    )(wc)
    return {"pointmae": found} if found else {}
