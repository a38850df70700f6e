"""Seeds as wildcards: one job per seed (paper scale) gives the claims step the same numbers as one job of all
seeds (tiny scale), because the ensemble's members are independent and the groups are merged in seed order."""

import math

import numpy as np
import pytest

from methods.neural_bridges.experiments import cell_job, linear_job
from methods.neural_bridges.groups import merge_arrays, merge_metrics
from methods.neural_bridges.results import claims_metrics

TRAIN = {"n_iters": 4, "batch": 8, "lr": 3e-3, "clip_norm": 1.0, "update_ema": 0.0, "best_window": 2}
CELL = {
    "alpha": 0.0625,
    "sigma": 0.1,
    "aux_beta": 1.0,
    "dt": 0.5,
    "eps": 1e-5,
    "activation": "lipswish",
    "n_samples": 40,
    "importance_samples": 60,
    "brute_force": {"n_paths": 400, "half_width": 0.05, "min_kept": 2},
    "pcn": {"chains": 3, "n_iters": 12, "burn_in": 6, "thin": 2},
    "timing": {"n_paths": 10, "repeats": 2},
}
EVENT = {"x0": [0.1, -0.1], "v": [2.0, -0.1], "T": 4.0}
OU = {"gamma": 1.7, "mu": 1.0, "sigma": 0.3, "x0": 0.0, "v": 1.0, "T": 1.0, "n_steps": 8, "activation": "lipswish"}
TIMINGS = ("cost_ratio_",)


def test_merge_metrics_concatenates_per_seed_lists_and_keeps_shared_values():
    docs = [
        {"seeds": [0], "w1": [0.1], "bound": 2.0, "spec": {"x0": [0.1, 0.2]}, "seconds": 1.0},
        {"seeds": [1], "w1": [0.3], "bound": 2.0, "spec": {"x0": [0.1, 0.2]}, "seconds": 3.0},
    ]
    out = merge_metrics(docs)
    assert out == {"seeds": [0, 1], "w1": [0.1, 0.3], "bound": 2.0, "spec": {"x0": [0.1, 0.2]}, "seconds": [1.0, 3.0]}
    assert merge_metrics(docs[:1]) is docs[0]
    with pytest.raises(ValueError, match="seconds"):
        merge_metrics([{**docs[0], "seeds": [0, 2], "w1": [0.1, 0.2]}, docs[1]])


def test_merge_arrays_concatenates_along_the_seed_axis_and_keeps_the_grid():
    a = {"ts": np.arange(3.0), "neural_mean": np.zeros((1, 3)), "brute_mean": np.ones((3, 2))}
    b = {"ts": np.arange(3.0), "neural_mean": np.ones((2, 3)), "brute_mean": np.zeros((3, 2))}
    out = merge_arrays([a, b])
    assert out["neural_mean"].shape == (3, 3) and np.array_equal(out["ts"], a["ts"])
    assert np.array_equal(out["brute_mean"], a["brute_mean"])  # the first seed's brute-force paths


def _same(a, b):
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-5, abs=1e-7)


def test_one_job_per_seed_gives_the_claims_step_the_numbers_of_one_job_of_all_seeds(tmp_path):
    def run(groups):
        files = {"lin": [], "cell": [], "cell_npz": []}
        for g in groups:
            tag = "_".join(map(str, g))
            linear_job(
                "ou",
                OU,
                1e-5,
                g,
                [8],
                TRAIN,
                50,
                [0.25, 0.5, 0.75],
                1,
                f"{tmp_path}/ou_{tag}.json",
                f"{tmp_path}/ou_{tag}.npz",
            )
            cell_job(
                "normal", CELL, EVENT, g, [8], TRAIN, 0.98, 1, f"{tmp_path}/c_{tag}.json", f"{tmp_path}/c_{tag}.npz"
            )
            files["lin"].append(f"{tmp_path}/ou_{tag}.json")
            files["cell"].append(f"{tmp_path}/c_{tag}.json")
            files["cell_npz"].append(f"{tmp_path}/c_{tag}.npz")
        return claims_metrics({"ou": files["lin"]}, {"normal": files["cell"]}, {"normal": files["cell_npz"]})

    together, apart = run([[0, 1]]), run([[0], [1]])
    assert together.keys() == apart.keys()
    assert len(together["w1_pcn_pcn_other_seed_normal"]) == 2
    moved = [k for k in together if not k.startswith(TIMINGS) and not _same(together[k], apart[k])]
    assert moved == []
