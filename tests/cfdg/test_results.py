"""Seeds as wildcards: the claims and figures steps read one file per seed group and merge them in seed order, so
one job per seed (paper scale) and one job of all seeds (tiny scale) give them the same per-seed numbers."""

import numpy as np

from methods.cfdg.figures import read_curves, returns_table
from methods.cfdg.results import claims_metrics
from methods.common.io import save_arrays, write_json

SCORES = {"iql": [10.0, 12.0, 11.0], "synther": [11.0, 12.5, 10.0], "cfdg": [13.0, 12.0, 14.0]}
QUALITY = {
    f"{k}_{m}": [0.1 * (i + 1), 0.2 * (i + 1), 0.3 * (i + 1)]
    for i, k in enumerate(("mmd", "auc", "dyn_next", "dyn_rew", "mmd_train"))
    for m in ("cfg_w1", "union")
}


def _write_groups(tmp_path, groups):
    quality, o2o = [], []
    for g in groups:
        tag = "_".join(map(str, g))
        q = tmp_path / f"quality_{tag}.json"
        write_json(
            q,
            {
                "seeds": g,
                "guidance_w": 1.0,
                "w_grid": [0, 1],
                "metrics": {k: [v[s] for s in g] for k, v in QUALITY.items()},
            },
        )
        quality.append(str(q))
        o = tmp_path / f"o2o_{tag}.json"
        write_json(
            o,
            {
                "seeds": g,
                "final_score": {v: [sc[s] for s in g] for v, sc in SCORES.items()},
                "offline_score": [1.0 * s for s in g],
            },
        )
        o2o.append(str(o))
        curves = np.array([[[0.0, SCORES[v][s]] for s in g] for v in SCORES])  # (V, S, 2)
        save_arrays(
            tmp_path / f"o2o_{tag}.npz",
            {"curves": curves, "steps": np.array([0, 5]), "variants": np.array(list(SCORES))},
        )
    return quality, o2o, [str(tmp_path / f"o2o_{'_'.join(map(str, g))}.npz") for g in groups]


def test_one_group_per_seed_gives_the_claims_and_figures_of_one_group_of_all_seeds(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    q1, o1, n1 = _write_groups(tmp_path / "a", [[0, 1, 2]])
    q2, o2, n2 = _write_groups(tmp_path / "b", [[0], [1], [2]])
    together, apart = claims_metrics(q1, {"medium": o1}), claims_metrics(q2, {"medium": o2})
    assert together == apart
    assert together["score_cfdg_medium"] == SCORES["cfdg"] and together["mmd_cfdg"] == QUALITY["mmd_cfg_w1"]
    assert together["diff_cfdg_iql_medium"] == np.mean(np.subtract(SCORES["cfdg"], SCORES["iql"]))
    curves, steps, variants = read_curves(n2)
    assert curves.shape == (3, 3, 2) and variants == list(SCORES)
    assert returns_table({"medium": read_curves(n1)}).equals(returns_table({"medium": (curves, steps, variants)}))
