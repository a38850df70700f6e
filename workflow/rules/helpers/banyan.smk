# Config checks and input functions used by workflow/rules/banyan.smk (its rules live there).

BANYAN = config["banyan"]
BANYAN_OUT = paper_dir("banyan")
BANYAN_VARIANTS = ["banyan", "no_entangle", "dense", "mean"]
BANYAN_WORD_SETS = list(BANYAN["data"]["word_sets"])
# the Hugging Face cache the submit host fills (rule banyan_download) and the data job reads offline
BANYAN_HF_CACHE = f"{RESOURCES}/banyan/hf"

_banyan_data = BANYAN["data"]
if _banyan_data["min_tokens"] >= _banyan_data["max_tokens"]:
    raise ValueError(
        f"config banyan.data.min_tokens ({_banyan_data['min_tokens']}) must be below max_tokens "
        f"({_banyan_data['max_tokens']}): no sentence would be kept; lower min_tokens or raise max_tokens."
    )
if _banyan_data["source"] == "datasets":
    for _key in ("corpus", "sts"):
        if _key not in _banyan_data:
            raise ValueError(
                f"config banyan.data.source: datasets needs banyan.data.{_key} (see config/full.yaml)."
            )
    if not _banyan_data["sts"]:
        raise ValueError(
            "config banyan.data.sts: name at least one sentence-similarity set to evaluate on."
        )
_unknown_word_sets = [w for w in BANYAN_WORD_SETS if w not in word_sim_files()]
if _unknown_word_sets:
    raise ValueError(
        f"config banyan.data.word_sets: unknown {_unknown_word_sets}; available: {sorted(word_sim_files())}."
    )


def banyan_train_files(ext):
    """{variant: [its file of every seed group]} (one group of all seeds at tiny scale, one per seed at
    paper scale), merged by the figures and claims steps in seed order."""
    return {
        v: expand(
            f"{BANYAN_OUT}/train/{v}_{{seeds}}.{ext}",
            seeds=seed_groups(BANYAN["seeds"]),
        )
        for v in BANYAN_VARIANTS
    }


def banyan_train_inputs(ext):
    """Named inputs `<ext>_<variant>`: the files of banyan_train_files."""
    return {f"{ext}_{v}": files for v, files in banyan_train_files(ext).items()}


def banyan_word_inputs():
    files = word_sim_files()
    return {k: files[k] for k in BANYAN_WORD_SETS}


def banyan_download_input(wc):
    """At paper scale (datasets source) the manifest of the corpus and STS sets the submit host fetched."""
    if BANYAN["data"]["source"] == "datasets":
        return [f"{RESOURCES}/banyan/hf.json"]
    return []


def banyan_figures():
    return [f"{BANYAN_OUT}/figures/scores.png", f"{BANYAN_OUT}/figures/loss_curves.png"]
