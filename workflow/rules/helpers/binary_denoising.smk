# Config checks and input functions used by workflow/rules/binary_denoising.smk (its rules live there).
import re

BD = config["binary_denoising"]
BD_OUT = paper_dir("binary_denoising")
BD_SPECS = BD["dataset_specs"]
BD_DATASETS = BD["datasets"]
BD_WHEELS = BD["wheels"]
BD_WHEEL_BY_FILE = {w["filename"]: w for w in BD_WHEELS.values()}
for _ds in BD_DATASETS:
    if _ds not in BD_SPECS:
        raise ValueError(
            f"config binary_denoising.datasets: {_ds!r} has no entry in "
            f"binary_denoising.dataset_specs; defined: {sorted(BD_SPECS)}"
        )
    _wheel = BD_SPECS[_ds].get("wheel")
    if BD_SPECS[_ds]["source"] == "wheel" and _wheel not in BD_WHEELS:
        raise ValueError(
            f"config binary_denoising.dataset_specs.{_ds}.wheel: {_wheel!r} is not among "
            f"binary_denoising.wheels {sorted(BD_WHEELS)}"
        )
_bd_exact = BD["exact"]
if not 1 <= _bd_exact["d"] <= 12:
    raise ValueError(
        f"config binary_denoising.exact.d = {_bd_exact['d']}: exact enumeration holds 2^d states and a "
        "2^d x 2^d transition matrix; use 1 <= d <= 12."
    )
for _key in ("alphas", "etas"):
    if len(set(_bd_exact[_key])) < 2:
        raise ValueError(
            f"config binary_denoising.exact.{_key} = {_bd_exact[_key]}: give at least 2 distinct values "
            "(the claims compare the smallest and the largest)."
        )


def bd_wheel_path(name):
    return f"{RESOURCES}/binary_denoising/{BD_WHEELS[name]['filename']}"


def bd_digits_input(wc):
    """The pinned wheel holding the dataset's CSV; torchvision datasets fetch their own files."""
    spec = BD_SPECS[wc.bd_dataset]
    if spec["source"] == "wheel":
        return [bd_wheel_path(spec["wheel"])]
    return []


def bd_mixture_files():
    return expand(f"{BD_OUT}/mixture/s{{seed}}.json", seed=BD["seeds"])


def bd_digits_files():
    """Ordered dataset-major, seed-minor (the scripts split the list in that order)."""
    return [
        f"{BD_OUT}/digits/{ds}_s{seed}.json"
        for ds in BD_DATASETS
        for seed in BD["seeds"]
    ]


def bd_figures():
    return [
        f"{BD_OUT}/figures/mixing_vs_alpha.png",
        f"{BD_OUT}/figures/quality_vs_m.png",
        f"{BD_OUT}/figures/exact_chain.png",
    ] + expand(f"{BD_OUT}/figures/samples_{{ds}}.png", ds=BD_DATASETS)
