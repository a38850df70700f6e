# Config checks and input functions used by workflow/rules/dpa_logic.smk (its rules live there).

DPA = config["dpa_logic"]
DPA_OUT = paper_dir("dpa_logic")
DPA_TAB = DPA["tabular"]
DPA_POLICIES_RE = "|".join(DPA_TAB["policies"])

for _policy, _dim in DPA_TAB["policies"].items():
    if _dim > DPA_TAB["task"]["n_responses"]:
        raise ValueError(
            f"config dpa_logic.tabular.policies.{_policy}: feature dimension {_dim} exceeds "
            f"task.n_responses = {DPA_TAB['task']['n_responses']}; use at most n_responses "
            "(n_responses is already a free table)."
        )
_n_pairs = DPA_TAB["task"]["n_responses"] * (DPA_TAB["task"]["n_responses"] - 1) // 2
if DPA_TAB["task"]["pairs_per_prompt"] >= _n_pairs:
    raise ValueError(
        f"config dpa_logic.tabular.task.pairs_per_prompt = {DPA_TAB['task']['pairs_per_prompt']} leaves no "
        f"held-out pair ({DPA_TAB['task']['n_responses']} responses give {_n_pairs} pairs); lower it."
    )
if "dpo" not in DPA_TAB["losses"]:
    raise ValueError(
        "config dpa_logic.tabular.losses must contain dpo (the claims compare against it); add it."
    )
for _section in ("tabular", "lm"):
    for _loss in DPA[_section]["hparams"]:
        if _loss not in DPA[_section]["losses"]:
            raise ValueError(
                f"config dpa_logic.{_section}.hparams.{_loss}: {_loss} is not in dpa_logic.{_section}.losses; "
                "remove the override or add the loss."
            )
if (
    DPA["lm"]["enabled"]
    and DPA["lm"]["dataset"]["path"] == "json"
    and not DPA["lm"]["dataset"]["data_files"]
):
    raise ValueError(
        "config dpa_logic.lm.dataset: path json needs data_files (a local .jsonl with prompt, chosen, rejected)."
    )


def dpa_tabular_files():
    """{policy: [one JSON per seed]}."""
    return {
        p: expand(f"{DPA_OUT}/tabular/{p}/seed{{seed}}.json", seed=DPA_TAB["seeds"])
        for p in DPA_TAB["policies"]
    }


def dpa_tabular_list():
    return [f for files in dpa_tabular_files().values() for f in files]


def dpa_figures():
    return [f"{DPA_OUT}/figures/{k}.png" for k in ("decompile", "lattice", "training")]


def dpa_targets():
    out = [claims_path("dpa_logic"), *dpa_figures()]
    if DPA["lm"]["enabled"]:
        out.append(f"{DPA_OUT}/lm/metrics.json")
    return out
