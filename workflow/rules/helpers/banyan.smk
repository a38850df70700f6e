# Config checks and input functions used by workflow/rules/banyan.smk (its rules live there).

BY = config["banyan"]
BY_OUT = paper_dir("banyan")
BY_VARIANTS = ["banyan", "no_entangle", "dense", "mean"]
BY_WORD_SETS = list(BY["data"]["word_sets"])

_by_data = BY["data"]
if _by_data["min_tokens"] >= _by_data["max_tokens"]:
    raise ValueError(
        f"config banyan.data.min_tokens ({_by_data['min_tokens']}) must be below max_tokens "
        f"({_by_data['max_tokens']}): no sentence would be kept; lower min_tokens or raise max_tokens."
    )
if _by_data["source"] == "datasets":
    for _key in ("corpus", "sts"):
        if _key not in _by_data:
            raise ValueError(
                f"config banyan.data.source: datasets needs banyan.data.{_key} (see config/full.yaml)."
            )
    if not _by_data["sts"]:
        raise ValueError(
            "config banyan.data.sts: name at least one sentence-similarity set to evaluate on."
        )
_unknown_word_sets = [w for w in BY_WORD_SETS if w not in word_sim_files()]
if _unknown_word_sets:
    raise ValueError(
        f"config banyan.data.word_sets: unknown {_unknown_word_sets}; available: {sorted(word_sim_files())}."
    )


def by_files(kind, ext):
    return {v: f"{BY_OUT}/{kind}/{v}.{ext}" for v in BY_VARIANTS}


def by_word_inputs():
    files = word_sim_files()
    return {k: files[k] for k in BY_WORD_SETS}


def by_figures():
    return [f"{BY_OUT}/figures/scores.png", f"{BY_OUT}/figures/loss_curves.png"]
