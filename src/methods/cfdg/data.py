"""Offline datasets: D4RL-style random / medium / expert buffers rolled out here from behaviour policies trained
(MuJoCo: gait search, envs.train_gait) or scripted (Pendulum) here (tiny scale, stand-ins for D4RL), or the D4RL
datasets themselves (full scale) through minari, or a local D4RL-layout .npz file (observations, actions, rewards,
next_observations, terminals)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .envs import PENDULUM, make_env, rollout, scripted_policy

KEYS = ("obs", "act", "rew", "next_obs", "done")
D4RL_KEYS = {"obs": "observations", "act": "actions", "rew": "rewards", "next_obs": "next_observations",
             "done": "terminals"}


def transitions_matrix(data: dict) -> np.ndarray:
    """Rows (s, a, r, s', done): the vector the diffusion model generates (SynthER)."""
    return np.concatenate([data["obs"], data["act"], data["rew"][:, None], data["next_obs"], data["done"][:, None]],
                          axis=1).astype(np.float32)


def split_matrix(x: np.ndarray, obs_dim: int, act_dim: int) -> dict:
    o, a = obs_dim, act_dim
    return {"obs": x[:, :o], "act": x[:, o:o + a], "rew": x[:, o + a], "next_obs": x[:, o + a + 1:2 * o + a + 1],
            "done": x[:, -1]}


def generate_dataset(env_id: str, policy: dict, n_transitions: int, n_envs: int, seed: int,
                     gaits: dict | None = None):
    """Roll out a behaviour policy (see envs.scripted_policy; MuJoCo tasks need the trained `gaits`) for
    n_transitions in total; returns (data, episode returns)."""
    if n_transitions % n_envs:
        raise ValueError(f"cfdg: n_transitions ({n_transitions}) must be a multiple of n_envs ({n_envs})")
    env = make_env(env_id, n_envs, seed)
    if env_id != PENDULUM and gaits is None:
        raise ValueError(f"cfdg: a scripted dataset on {env_id!r} needs the trained gaits (cfdg.behaviour)")
    pol = scripted_policy(policy, np.random.default_rng(seed + 1), gaits, getattr(env, "dt", 0.0), env.act_dim)
    return rollout(env, pol, n_transitions // n_envs)


def load_d4rl_npz(path: str | Path) -> dict:
    """A D4RL-layout .npz (observations, actions, rewards, next_observations, terminals)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"cfdg dataset file {path} does not exist; set cfdg.datasets.<name>.path to a "
                                f"D4RL-layout .npz or use source: minari")
    with np.load(path) as f:
        missing = [v for v in D4RL_KEYS.values() if v not in f]
        if missing:
            raise ValueError(f"cfdg dataset file {path} lacks arrays {missing}; a D4RL-layout .npz needs "
                             f"{sorted(D4RL_KEYS.values())}")
        data = {k: np.asarray(f[v], dtype=np.float64) for k, v in D4RL_KEYS.items()}
    data["act"] = data["act"].reshape(len(data["act"]), -1)
    return data


def load_minari(dataset_id: str) -> dict:
    """A minari dataset (e.g. 'mujoco/halfcheetah/medium-v0', the D4RL successor) as flat transitions."""
    try:
        import minari
    except ImportError as e:
        raise ImportError(f"cfdg dataset {dataset_id!r} needs minari: pip install minari, then "
                          f"`minari download {dataset_id}`") from e
    ds = minari.load_dataset(dataset_id, download=False)
    cols = {k: [] for k in KEYS}
    for ep in ds.iterate_episodes():
        cols["obs"].append(ep.observations[:-1]); cols["next_obs"].append(ep.observations[1:])
        cols["act"].append(ep.actions); cols["rew"].append(ep.rewards)
        cols["done"].append(ep.terminations.astype(float))
    return {k: np.concatenate(v).astype(np.float64) for k, v in cols.items()}


def load_dataset(spec: dict, env_id: str, seed: int, gaits: dict | None = None) -> tuple[dict, np.ndarray]:
    """Offline dataset named by its config entry: source scripted | npz | minari; returns (data, episode returns,
    empty where unknown)."""
    source = spec["source"]
    if source == "scripted":
        return generate_dataset(env_id, spec["policy"], int(spec["n_transitions"]), int(spec["n_envs"]), seed,
                                gaits)
    if source == "npz":
        return load_d4rl_npz(spec["path"]), np.array([])
    if source == "minari":
        return load_minari(spec["id"]), np.array([])
    raise ValueError(f"cfdg dataset source {source!r} unknown; use scripted, npz or minari")
