# Config checks and input functions used by workflow/rules/binary_denoising.smk (its rules live there).
import re

BINARY_DENOISING = config["binary_denoising"]
BINARY_DENOISING_OUT = paper_dir("binary_denoising")
BINARY_DENOISING_SPECS = BINARY_DENOISING["dataset_specs"]
BINARY_DENOISING_DATASETS = BINARY_DENOISING["datasets"]
BINARY_DENOISING_WHEELS = BINARY_DENOISING["wheels"]
BINARY_DENOISING_WHEEL_BY_FILE = {
    w["filename"]: w for w in BINARY_DENOISING_WHEELS.values()
}
for _dataset in BINARY_DENOISING_DATASETS:
    if _dataset not in BINARY_DENOISING_SPECS:
        raise ValueError(
            f"config binary_denoising.datasets: {_dataset!r} has no entry in "
            f"binary_denoising.dataset_specs; defined: {sorted(BINARY_DENOISING_SPECS)}"
        )
    _missing = {"url", "filename", "sha256"} - set(BINARY_DENOISING_SPECS[_dataset])
    if BINARY_DENOISING_SPECS[_dataset]["source"] == "npz" and _missing:
        raise ValueError(
            f"config binary_denoising.dataset_specs.{_dataset}: an npz source needs url, filename and sha256 "
            f"(the pinned archive); missing {sorted(_missing)}"
        )
    _wheel_name = BINARY_DENOISING_SPECS[_dataset].get("wheel")
    if (
        BINARY_DENOISING_SPECS[_dataset]["source"] == "wheel"
        and _wheel_name not in BINARY_DENOISING_WHEELS
    ):
        raise ValueError(
            f"config binary_denoising.dataset_specs.{_dataset}.wheel: {_wheel_name!r} is not among "
            f"binary_denoising.wheels {sorted(BINARY_DENOISING_WHEELS)}"
        )
_binary_denoising_exact = BINARY_DENOISING["exact"]
if not 1 <= _binary_denoising_exact["d"] <= 12:
    raise ValueError(
        f"config binary_denoising.exact.d = {_binary_denoising_exact['d']}: exact enumeration holds 2^d states and a "
        "2^d x 2^d transition matrix; use 1 <= d <= 12."
    )
for _key in ("alphas", "etas"):
    if len(set(_binary_denoising_exact[_key])) < 2:
        raise ValueError(
            f"config binary_denoising.exact.{_key} = {_binary_denoising_exact[_key]}: give at least 2 distinct values "
            "(the claims compare the smallest and the largest)."
        )


def binary_denoising_wheel_path(name):
    return f"{RESOURCES}/binary_denoising/{BINARY_DENOISING_WHEELS[name]['filename']}"


# Datasets read from a pinned npz archive (full MNIST at paper scale), by file name: binary_denoising_npz_download
# fetches them on the submit host.
BINARY_DENOISING_NPZ_BY_FILE = {
    spec["filename"]: spec
    for spec in BINARY_DENOISING_SPECS.values()
    if spec["source"] == "npz"
}


def binary_denoising_digits_input(wc):
    """The pinned file the dataset is read from: the wheel holding its CSV, or its npz archive."""
    spec = BINARY_DENOISING_SPECS[wc.bd_dataset]
    if spec["source"] == "wheel":
        return [binary_denoising_wheel_path(spec["wheel"])]
    return [f"{RESOURCES}/binary_denoising/{spec['filename']}"]


def binary_denoising_mixture_files():
    return expand(
        f"{BINARY_DENOISING_OUT}/mixture/seed{{seed}}.json",
        seed=BINARY_DENOISING["seeds"],
    )


def binary_denoising_exact_files():
    """binary_denoising_exact's outputs, one per seed group, in seed order."""
    return expand(
        f"{BINARY_DENOISING_OUT}/exact/{{group}}.json",
        group=seed_groups(BINARY_DENOISING["seeds"]),
    )


def binary_denoising_digits_files():
    """Ordered dataset-major, seed-minor (the scripts split the list in that order)."""
    return [
        f"{BINARY_DENOISING_OUT}/digits/{ds}_seed{seed}.json"
        for ds in BINARY_DENOISING_DATASETS
        for seed in BINARY_DENOISING["seeds"]
    ]


def binary_denoising_figure_files():
    return [
        f"{BINARY_DENOISING_OUT}/figures/mixing_vs_alpha.png",
        f"{BINARY_DENOISING_OUT}/figures/quality_vs_m.png",
        f"{BINARY_DENOISING_OUT}/figures/exact_chain.png",
    ] + expand(
        f"{BINARY_DENOISING_OUT}/figures/samples_{{ds}}.png",
        ds=BINARY_DENOISING_DATASETS,
    )
