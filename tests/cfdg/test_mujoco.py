"""The MuJoCo path: HalfCheetah-v5 rollouts (and Hopper-v5, the paper-scale task), the simulator check of generated transitions, the gait behaviour
policies, and the full-scale minari loader on a dataset written locally (no download)."""

import math

import numpy as np
import pytest

from methods.cfdg.data import data_job, generate_dataset, load_minari
from methods.cfdg.envs import GymVec, gait_action, pick_gaits, train_gait
from methods.common.io import read_json

ENV = "HalfCheetah-v5"
GAIT = np.r_[3.0, np.full(6, 0.8), np.linspace(0, 2, 6)]


def test_gait_action_hand_computed():
    p = np.r_[2.0, 0.5, 3.0, 0.0, math.pi / 2]  # f, amps, phases for 2 joints
    a = gait_action(p, np.array([0, 1]), dt=0.05)
    # t = 1: arg = 2 pi 2 0.05 = 0.2 pi; joint 2 amplitude 3 clips at 1
    np.testing.assert_allclose(a, [[0.0, 1.0], [0.5 * math.sin(0.2 * math.pi), min(1.0, 3 * math.cos(0.2 * math.pi))]])


def test_pick_gaits_medium_is_the_first_iterate_above_the_fraction():
    search = {"snapshots": [[0.0], [1.0], [2.0], [3.0], [4.0]], "returns": [-5.0, 10.0, 45.0, 100.0, 90.0]}
    g = pick_gaits(search, 0.4)
    assert g["expert"] == [3.0] and g["medium"] == [2.0] and (g["expert_iter"], g["medium_iter"]) == (3, 2)


@pytest.mark.parametrize("env_id,act_dim", [(ENV, 6), ("Hopper-v5", 3)])  # Hopper-v5: the paper-scale task
def test_predict_agrees_with_the_mujoco_simulator(env_id, act_dim):
    """Dynamics-consistency reference: stepping from a stored observation reproduces the simulator's s', r."""
    env = GymVec(env_id, 3, 0)
    obs = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(5):
        obs, *_ = env.step(rng.uniform(-1, 1, (3, act_dim)))
    act = rng.uniform(-1, 1, (3, act_dim))
    _, r, _, _ = env.step(act)
    p_next, p_r = GymVec(env_id, 1, 9).predict(obs, act)
    np.testing.assert_allclose(p_next, env.last_obs, atol=1e-6)
    np.testing.assert_allclose(p_r, r, atol=1e-6)


def test_halfcheetah_rollouts_reproducible_by_seed():
    gaits = {"expert": GAIT.tolist(), "medium": GAIT.tolist()}
    pol = {"level": "medium", "noise": 0.3, "random_prob": 0.2}
    a, _ = generate_dataset(ENV, pol, 60, 2, seed=4, gaits=gaits)
    b, _ = generate_dataset(ENV, pol, 60, 2, seed=4, gaits=gaits)
    c, _ = generate_dataset(ENV, pol, 60, 2, seed=5, gaits=gaits)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    assert not np.array_equal(a["act"], c["act"])
    assert a["obs"].shape == (60, 17) and a["act"].shape == (60, 6)
    with pytest.raises(ValueError, match="behaviour"):
        generate_dataset(ENV, pol, 60, 2, seed=4)


def test_gait_search_improves_on_its_first_iterate():
    cfg = dict(iters=4, population=8, elites=3, horizon=40, init_freq=2.0, min_sd=0.05)
    s1, s2 = train_gait(ENV, cfg, 3), train_gait(ENV, cfg, 3)
    assert s1 == s2  # reproducible by seed
    assert max(s1["returns"]) > s1["returns"][0]
    # the stored return of an iterate is its own rollout's return (the mean runs in the last env copy)
    env = GymVec(ENV, 9, 3)
    env.reset()
    total = np.zeros(9)
    for t in range(40):
        total += env.step(gait_action(np.asarray(s1["snapshots"][2]), np.full(9, t), env.dt))[1]
    assert total[-1] == pytest.approx(s1["returns"][2], rel=1e-9, abs=1e-9)


def _write_minari(root, dataset_id, n_episodes, steps, seed):
    """A small dataset in minari's own format from real HalfCheetah rollouts (minari's DataCollector needs jax,
    absent here, so episodes go through create_dataset_from_buffers)."""
    import gymnasium as gym
    import minari
    from minari.data_collector.episode_buffer import EpisodeBuffer

    env, rng, bufs = gym.make(ENV), np.random.default_rng(seed), []
    for ep in range(n_episodes):
        obs = [env.reset(seed=seed + ep)[0]]
        act, rew = [], []
        for _ in range(steps):
            a = rng.uniform(-1, 1, 6).astype(np.float32)
            o, r, *_ = env.step(a)
            obs.append(o)
            act.append(a)
            rew.append(r)
        last = np.r_[np.zeros(steps - 1, bool), True]
        bufs.append(
            EpisodeBuffer(
                id=ep,
                observations=np.array(obs),
                actions=np.array(act),
                rewards=np.array(rew),
                terminations=np.zeros(steps, bool),
                truncations=last,
            )
        )
    minari.create_dataset_from_buffers(
        dataset_id=dataset_id,
        buffer=bufs,
        env=gym.make(ENV),
        algorithm_name="random",
        author="test",
        author_email="test@example.org",
        code_permalink="local",
    )


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_minari_dataset_written_locally_feeds_the_data_job(tmp_path, monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))
    _write_minari(tmp_path, "mujoco/halfcheetah/medium-v0", 3, 20, 0)
    _write_minari(tmp_path, "mujoco/halfcheetah/expert-v0", 2, 25, 10)
    d = load_minari("mujoco/halfcheetah/medium-v0")
    assert d["obs"].shape == (60, 17) and d["act"].shape == (60, 6) and d["rew"].shape == (60,)
    # next_obs is obs shifted by one inside each episode, and consistent with the simulator
    np.testing.assert_array_equal(d["next_obs"][:19], d["obs"][1:20])
    p_next, p_r = GymVec(ENV, 1, 0).predict(d["obs"][:19], d["act"][:19])
    np.testing.assert_allclose(p_next, d["next_obs"][:19], atol=1e-5)
    np.testing.assert_allclose(p_r, d["rew"][:19], atol=1e-5)

    out = tmp_path / "out"
    data_job(
        env_id=ENV,
        datasets={"medium": {"source": "minari", "id": "mujoco/halfcheetah/medium-v0"}},
        online={
            "train": {"source": "minari", "id": "mujoco/halfcheetah/expert-v0"},
            "heldout": {"source": "split", "fraction": 0.2},
        },
        reference={"source": "fixed", "random": -280.178953, "expert": 12135.0, "episodes": 2},
        seed=0,
        out_dir=str(out),
        out_reference=str(out / "reference.json"),
    )
    with np.load(out / "offline_medium.npz") as f:
        assert f["x"].shape == (60, 17 + 6 + 1 + 17 + 1) and int(f["act_dim"]) == 6
    with np.load(out / "online.npz") as f:
        assert f["train"].shape == (40, 42) and f["heldout"].shape == (10, 42)
    ref = read_json(out / "reference.json")
    assert ref["expert"] == 12135.0 and ref["gaits"] is None and "measured" not in ref  # no search at full scale


def test_minari_missing_dataset_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "empty"))
    with pytest.raises(Exception):
        load_minari("mujoco/halfcheetah/medium-v0")
