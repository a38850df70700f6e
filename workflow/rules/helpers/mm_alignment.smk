# Config checks and input functions used by workflow/rules/mm_alignment.smk (its rules live there).

MMA = config["mm_alignment"]
MMA_OUT = paper_dir("mm_alignment")
MMA_U = sorted(MMA["synthetic"]["uniqueness"])
MMA_D = sorted(MMA["synthetic"]["hetero_depths"])

_mma_gen = MMA["synthetic"]["generator"]
if MMA_U[0] != 0 or len(MMA_U) < 2:
    raise ValueError(
        f"config mm_alignment.synthetic.uniqueness {MMA_U}: needs 0 (full redundancy) and at least one "
        "larger level, e.g. [0, 3, 6]; the claims compare U = 0 with the largest U."
    )
if MMA_U[-1] > _mma_gen["n_label_features"]:
    raise ValueError(
        f"config mm_alignment.synthetic.uniqueness: {MMA_U[-1]} exceeds generator.n_label_features "
        f"({_mma_gen['n_label_features']}); uniqueness counts label bits outside the shared block."
    )
for _u in MMA_U:
    _r, _u1 = _mma_gen["n_label_features"] - _u, _u // 2
    if _r > _mma_gen["shared_dim"] or _u - _u1 > _mma_gen["unique_dim"]:
        raise ValueError(
            f"config mm_alignment.synthetic.uniqueness {_u}: needs {_r} shared bits (shared_dim = "
            f"{_mma_gen['shared_dim']}) and {_u - _u1} unique bits per modality (unique_dim = "
            f"{_mma_gen['unique_dim']}); lower the uniqueness or raise the block sizes."
        )
if len(MMA_D) < 2 or MMA_D[-1] > _mma_gen["max_hetero_depth"]:
    raise ValueError(
        f"config mm_alignment.synthetic.hetero_depths {MMA_D}: needs at least two depths, all at most "
        f"generator.max_hetero_depth ({_mma_gen['max_hetero_depth']})."
    )
if len(MMA["synthetic"]["encoder"]["depths"]) < 3:
    raise ValueError(
        "config mm_alignment.synthetic.encoder.depths: a correlation across depths needs at least 3 depths."
    )
if len(MMA["real"]["encoder"]["widths"]) < 3:
    raise ValueError(
        "config mm_alignment.real.encoder.widths: a correlation across widths needs at least 3 widths."
    )
for _part in ("synthetic", "real"):
    _al = MMA[_part]["align"]
    if _al["k"] >= _al["n_align"]:
        raise ValueError(
            f"config mm_alignment.{_part}.align.k ({_al['k']}) must be below n_align ({_al['n_align']}): "
            "mutual k-NN needs k < number of points."
        )
if MMA["synthetic"]["align"]["n_align"] > 0.15 * _mma_gen["n_samples"]:
    raise ValueError(
        "config mm_alignment.synthetic.align.n_align exceeds the test split (15% of generator.n_samples); "
        "lower n_align or raise n_samples."
    )
if MMA["real"]["source"]["kind"] in ("npz", "hf") and not MMA["real"]["source"].get(
    "path"
):
    raise ValueError(
        "config mm_alignment.real.source: kinds 'npz' and 'hf' need a path (an .npz with 'images' and "
        "'labels', or a datasets.load_dataset path such as ylecun/mnist)."
    )


def mma_synthetic_files():
    return {f"synthetic_U{u}": f"{MMA_OUT}/synthetic/U{u}.json" for u in MMA_U}


def mma_figures():
    return [
        f"{MMA_OUT}/figures/correlation_vs_uniqueness.png",
        f"{MMA_OUT}/figures/alignment_vs_accuracy.png",
    ]
