"""Offline datasets: D4RL-style random / medium / expert buffers rolled out here from behaviour policies (tiny
scale, stand-ins for D4RL: Bullet tasks: the pretrained 2017 expert shipped with pybullet, expert.py; MuJoCo:
gaits trained here by search, envs.train_gait; Pendulum: scripted), or the D4RL datasets themselves (full scale)
through minari, or a local D4RL-layout .npz file (observations, actions, rewards, next_observations, terminals);
the data step (`data_job`: behaviour policies, datasets, reference returns). All of it runs on the CPU
(Bullet, MuJoCo and numpy)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from methods.common.io import log, save_arrays, write_json

from .envs import PENDULUM, is_bullet, make_env, pick_gaits, rollout, scripted_policy, train_gait
from .expert import load_expert

KEYS = ("obs", "act", "rew", "next_obs", "done")
D4RL_KEYS = {
    "obs": "observations",
    "act": "actions",
    "rew": "rewards",
    "next_obs": "next_observations",
    "done": "terminals",
}


def transitions_matrix(data: dict) -> np.ndarray:
    """Rows (s, a, r, s', done): the vector the diffusion model generates (SynthER)."""
    return np.concatenate(
        [data["obs"], data["act"], data["rew"][:, None], data["next_obs"], data["done"][:, None]], axis=1
    ).astype(np.float32)


def split_matrix(x: np.ndarray, obs_dim: int, act_dim: int) -> dict:
    o, a = obs_dim, act_dim
    return {
        "obs": x[:, :o],
        "act": x[:, o : o + a],
        "rew": x[:, o + a],
        "next_obs": x[:, o + a + 1 : 2 * o + a + 1],
        "done": x[:, -1],
    }


def generate_dataset(env_id: str, policy: dict, n_transitions: int, n_envs: int, seed: int, gaits: dict | None = None):
    """Roll out a behaviour policy (see envs.scripted_policy; MuJoCo and Bullet tasks need the behaviour policies
    `gaits`: trained gaits or the pretrained expert) for n_transitions in total; returns (data, episode returns)."""
    if n_transitions % n_envs:
        raise ValueError(f"cfdg: n_transitions ({n_transitions}) must be a multiple of n_envs ({n_envs})")
    env = make_env(env_id, n_envs, seed)
    if env_id != PENDULUM and gaits is None:
        raise ValueError(
            f"cfdg: a scripted dataset on {env_id!r} needs behaviour policies (cfdg.expert for a Bullet task, "
            "cfdg.behaviour for a MuJoCo task)"
        )
    pol = scripted_policy(policy, np.random.default_rng(seed + 1), gaits, getattr(env, "dt", 0.0), env.act_dim)
    return rollout(env, pol, n_transitions // n_envs)


def load_d4rl_npz(path: str | Path) -> dict:
    """A D4RL-layout .npz (observations, actions, rewards, next_observations, terminals)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(
            f"cfdg dataset file {path} does not exist; set cfdg.datasets.<name>.path to a "
            f"D4RL-layout .npz or use source: minari"
        )
    with np.load(path) as f:
        missing = [v for v in D4RL_KEYS.values() if v not in f]
        if missing:
            raise ValueError(
                f"cfdg dataset file {path} lacks arrays {missing}; a D4RL-layout .npz needs "
                f"{sorted(D4RL_KEYS.values())}"
            )
        data = {k: np.asarray(f[v], dtype=np.float64) for k, v in D4RL_KEYS.items()}
    data["act"] = data["act"].reshape(len(data["act"]), -1)
    return data


def load_minari(dataset_id: str) -> dict:
    """A minari dataset (e.g. 'mujoco/halfcheetah/medium-v0', the D4RL successor) as flat transitions."""
    try:
        import minari
    except ImportError as e:
        raise ImportError(
            f"cfdg dataset {dataset_id!r} needs minari: pip install minari, then `minari download {dataset_id}`"
        ) from e
    ds = minari.load_dataset(dataset_id, download=False)
    cols = {k: [] for k in KEYS}
    for ep in ds.iterate_episodes():
        cols["obs"].append(ep.observations[:-1])
        cols["next_obs"].append(ep.observations[1:])
        cols["act"].append(ep.actions)
        cols["rew"].append(ep.rewards)
        cols["done"].append(ep.terminations.astype(float))
    return {k: np.concatenate(v).astype(np.float64) for k, v in cols.items()}


def load_dataset(spec: dict, env_id: str, seed: int, gaits: dict | None = None) -> tuple[dict, np.ndarray]:
    """Offline dataset named by its config entry: source scripted | npz | minari; returns (data, episode returns,
    empty where unknown)."""
    source = spec["source"]
    if source == "scripted":
        return generate_dataset(env_id, spec["policy"], int(spec["n_transitions"]), int(spec["n_envs"]), seed, gaits)
    if source == "npz":
        return load_d4rl_npz(spec["path"]), np.array([])
    if source == "minari":
        return load_minari(spec["id"]), np.array([])
    raise ValueError(f"cfdg dataset source {source!r} unknown; use scripted, npz or minari")


# --- the data step -------------------------------------------------------------------------------


def reference_returns(env_id: str, reference: dict, seed: int, gaits: dict | None = None) -> dict:
    """Random and expert returns that define the normalised score: the given D4RL reference scores (fixed), or
    measured from the scripted random and expert policies (scripted). With fixed scores and episodes given, the
    local random / expert behaviour policies' returns are measured too (for the record, as `measured`)."""
    out = {"source": reference["source"]}
    if reference["source"] == "fixed":
        out.update(random=float(reference["random"]), expert=float(reference["expert"]))
        if "episodes" not in reference or (gaits is None and env_id != "pendulum"):
            return out
    n_envs = int(reference["episodes"])
    horizon = make_env(env_id, 1, seed).horizon
    measured = {}
    for name, policy in (
        ("random", {"noise": 0.0, "random_prob": 1.0}),
        ("expert", {"noise": 0.0, "random_prob": 0.0, "level": "expert"}),
    ):
        _, returns = generate_dataset(env_id, policy, n_envs * horizon, n_envs, seed + (name == "expert"), gaits)
        measured[name] = float(returns.mean())
    if reference["source"] == "fixed":
        out["measured"] = measured
    else:
        out.update(measured)
    return out


def behaviour_gaits(
    env_id: str, behaviour: dict | None, seed: int, expert_wheel: str | None = None, expert_member: str | None = None
) -> dict | None:
    """The behaviour policies by level: Bullet tasks: {'expert': the pretrained policy of `expert_member` in the
    pinned pybullet wheel}; MuJoCo tasks: the gaits (expert, medium snapshot) trained by cross-entropy search;
    None for Pendulum (its expert is scripted)."""
    if env_id == "pendulum":
        return None
    if is_bullet(env_id):
        if not expert_wheel or not expert_member:
            raise ValueError(f"config cfdg.expert (the pinned pybullet wheel and member) is needed on {env_id!r}")
        expert = load_expert(expert_wheel, expert_member)
        log(f"expert policy: {expert_member} ({expert.obs_dim} observations -> {expert.act_dim} actions)")
        return {"expert": expert}
    if behaviour is None:
        raise ValueError(f"config cfdg.behaviour is needed for scripted datasets on {env_id!r}")
    search = train_gait(env_id, behaviour, seed)
    gaits = pick_gaits(search, float(behaviour["medium_fraction"]))
    gaits["search_returns"] = search["returns"]
    log(
        f"gait search returns ({behaviour['horizon']}-step episodes): {np.round(search['returns'], 1).tolist()}; "
        f"expert = iteration {gaits['expert_iter']}, medium = iteration {gaits['medium_iter']}"
    )
    return gaits


def data_job(
    env_id: str,
    datasets: dict,
    online: dict,
    reference: dict,
    seed: int,
    out_dir: str,
    out_reference: str,
    behaviour: dict | None = None,
    expert_wheel: str | None = None,
    expert_member: str | None = None,
) -> None:
    """Step cfdg_data: behaviour policies (Bullet: the pretrained expert; MuJoCo: gait search), offline datasets,
    the online train / held-out sets of the quality experiment, and the reference returns, all written as
    transition matrices (s, a, r, s', done)."""
    specs = [*datasets.values(), *online.values()]
    needs_gaits = any(sp["source"] == "scripted" for sp in specs) or reference["source"] == "scripted"
    gaits = behaviour_gaits(env_id, behaviour, seed + 11, expert_wheel, expert_member) if needs_gaits else None
    stats = {}
    for i, (name, spec) in enumerate(sorted(datasets.items())):
        data, returns = load_dataset(spec, env_id, seed + 100 * i, gaits)
        save_arrays(
            f"{out_dir}/offline_{name}.npz",
            {"x": transitions_matrix(data), "obs_dim": data["obs"].shape[1], "act_dim": data["act"].shape[1]},
        )
        stats[name] = {"n": len(data["rew"]), "behaviour_return": float(returns.mean()) if len(returns) else None}
        log(f"dataset {name}: {stats[name]}")
    on_train, r_train = load_dataset(online["train"], env_id, seed + 7, gaits)
    x_train = transitions_matrix(on_train)
    if online["heldout"]["source"] == "split":  # a random part of the online set, kept out of training
        perm = np.random.default_rng(seed + 8).permutation(len(x_train))
        n_held = int(round(len(x_train) * float(online["heldout"]["fraction"])))
        x_train, x_held = x_train[perm[n_held:]], x_train[perm[:n_held]]
    else:
        x_held = transitions_matrix(load_dataset(online["heldout"], env_id, seed + 8, gaits)[0])
    save_arrays(f"{out_dir}/online.npz", {"train": x_train, "heldout": x_held})
    ref = reference_returns(env_id, reference, seed + 9, gaits)
    ref["datasets"] = stats
    ref["gaits"] = {k: v for k, v in gaits.items() if not callable(v)} if gaits else gaits
    ref["expert_policy"] = expert_member if gaits and callable(gaits.get("expert")) else None
    ref["online_behaviour_return"] = float(r_train.mean()) if len(r_train) else None
    log(f"reference returns: {ref}")
    write_json(out_reference, ref)


def load_matrix(path: str) -> tuple[np.ndarray, int, int]:
    """(transition matrix, obs_dim, act_dim) of an offline dataset written by `data_job`."""
    with np.load(path) as f:
        return f["x"], int(f["obs_dim"]), int(f["act_dim"])
