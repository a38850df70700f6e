"""The full-scale data path (D4RL-layout files, split held-out set, fixed reference scores) on local stand-ins."""

import numpy as np
import pytest

from methods.cfdg.data import data_job
from methods.common.io import read_json


def _write(path, n, seed):
    rng = np.random.default_rng(seed)
    np.savez(
        path,
        observations=rng.normal(size=(n, 3)),
        actions=rng.uniform(-1, 1, (n, 1)),
        rewards=-rng.random(n),
        next_observations=rng.normal(size=(n, 3)),
        terminals=np.zeros(n),
    )


def test_data_job_on_local_d4rl_files(tmp_path):
    _write(tmp_path / "medium.npz", 100, 0)
    _write(tmp_path / "expert.npz", 50, 1)
    data_job(
        env_id="pendulum",
        datasets={"medium": {"source": "npz", "path": str(tmp_path / "medium.npz")}},
        online={
            "train": {"source": "npz", "path": str(tmp_path / "expert.npz")},
            "heldout": {"source": "split", "fraction": 0.2},
        },
        reference={"source": "fixed", "random": -280.178953, "expert": 12135.0},
        seed=0,
        out_dir=str(tmp_path / "out"),
        out_reference=str(tmp_path / "out" / "reference.json"),
    )
    with np.load(tmp_path / "out" / "online.npz") as f:
        train, held = f["train"], f["heldout"]
    assert train.shape == (40, 9) and held.shape == (10, 9)
    assert not {tuple(r) for r in train} & {tuple(r) for r in held}  # disjoint split
    with np.load(tmp_path / "out" / "offline_medium.npz") as f:
        assert f["x"].shape == (100, 9) and int(f["obs_dim"]) == 3 and int(f["act_dim"]) == 1
    ref = read_json(tmp_path / "out" / "reference.json")
    assert ref["random"] == pytest.approx(-280.178953) and ref["expert"] == 12135.0
