# Config checks and input functions used by workflow/rules/dpa_logic.smk (its rules live there).

DPA_LOGIC = config["dpa_logic"]
DPA_LOGIC_OUT = paper_dir("dpa_logic")
DPA_LOGIC_TABULAR = DPA_LOGIC["tabular"]
DPA_LOGIC_POLICIES_RE = "|".join(DPA_LOGIC_TABULAR["policies"])

for _policy, _dim in DPA_LOGIC_TABULAR["policies"].items():
    if _dim > DPA_LOGIC_TABULAR["task"]["n_responses"]:
        raise ValueError(
            f"config dpa_logic.tabular.policies.{_policy}: feature dimension {_dim} exceeds "
            f"task.n_responses = {DPA_LOGIC_TABULAR['task']['n_responses']}; use at most n_responses "
            "(n_responses is already a free table)."
        )
_n_responses = DPA_LOGIC_TABULAR["task"]["n_responses"]
_n_pairs = _n_responses * (_n_responses - 1) // 2
if DPA_LOGIC_TABULAR["task"]["pairs_per_prompt"] >= _n_pairs:
    raise ValueError(
        f"config dpa_logic.tabular.task.pairs_per_prompt = {DPA_LOGIC_TABULAR['task']['pairs_per_prompt']} leaves no "
        f"held-out pair ({DPA_LOGIC_TABULAR['task']['n_responses']} responses give {_n_pairs} pairs); lower it."
    )
if "dpo" not in DPA_LOGIC_TABULAR["losses"]:
    raise ValueError(
        "config dpa_logic.tabular.losses must contain dpo (the claims compare against it); add it."
    )
for _section in ("tabular", "lm"):
    for _loss in DPA_LOGIC[_section]["hparams"]:
        if _loss not in DPA_LOGIC[_section]["losses"]:
            raise ValueError(
                f"config dpa_logic.{_section}.hparams.{_loss}: {_loss} is not in dpa_logic.{_section}.losses; "
                "remove the override or add the loss."
            )
if (
    DPA_LOGIC["lm"]["enabled"]
    and DPA_LOGIC["lm"]["dataset"]["path"] == "json"
    and not DPA_LOGIC["lm"]["dataset"]["data_files"]
):
    raise ValueError(
        "config dpa_logic.lm.dataset: path json needs data_files (a local .jsonl with prompt, chosen, rejected)."
    )


def dpa_logic_tabular_files():
    """{policy: [one JSON per seed]}."""
    return {
        p: expand(
            f"{DPA_LOGIC_OUT}/tabular/{p}/seed{{seed}}.json",
            seed=DPA_LOGIC_TABULAR["seeds"],
        )
        for p in DPA_LOGIC_TABULAR["policies"]
    }


def dpa_logic_tabular_list():
    return [f for files in dpa_logic_tabular_files().values() for f in files]


def dpa_logic_figures():
    return [
        f"{DPA_LOGIC_OUT}/figures/{k}.png" for k in ("decompile", "lattice", "training")
    ]


def dpa_logic_lm_files():
    """The LM step's results, one file per seed group (full scale: one per seed); none when lm is off."""
    if not DPA_LOGIC["lm"]["enabled"]:
        return []
    return expand(
        f"{DPA_LOGIC_OUT}/lm/metrics_{{seeds}}.json",
        seeds=seed_groups(DPA_LOGIC["lm"]["seeds"]),
    )


def dpa_logic_targets():
    return [claims_path("dpa_logic"), *dpa_logic_figures(), *dpa_logic_lm_files()]
