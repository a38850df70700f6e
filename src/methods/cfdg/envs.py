"""Environments: a gymnasium wrapper (Bullet tasks through pybullet-envs-gymnasium: HopperBulletEnv-v0 at tiny
scale; MuJoCo tasks: Hopper-v5 at full scale, HalfCheetah-v5 as an option) and a vectorised numpy copy of gymnasium's Pendulum-v1 (kept as
a config option: env 'pendulum'), with the same interface; scripted, trained and pretrained behaviour policies for
the D4RL-style stand-in datasets.

Interface of a vectorised env with `n` copies: `reset() -> obs (n, obs_dim)`,
`step(action (n, act_dim) in [-1, 1]) -> (obs, reward, terminated, truncated)`; copies whose episode ended are
reset automatically and `last_obs` holds the true final observation of the step (what a transition stores);
`t` (n,) is each copy's time step within its episode. A behaviour policy is called as `policy(obs, t)`.
Actions are always in [-1, 1]; each env scales them to its own torque range.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys

import numpy as np

PENDULUM = "pendulum"


def angle_normalize(x: np.ndarray) -> np.ndarray:
    return ((x + np.pi) % (2 * np.pi)) - np.pi


class PendulumVec:
    """Pendulum-v1 (gymnasium classic_control, g = 10): the same dynamics, reward, observation and 200-step limit,
    run as `n` copies at once. Reward -(theta^2 + 0.1 thetadot^2 + 0.001 u^2) uses the state before the step."""

    max_speed, max_torque, dt, g, m, l = 8.0, 2.0, 0.05, 10.0, 1.0, 1.0
    horizon, obs_dim, act_dim = 200, 3, 1

    def __init__(self, n: int, seed: int):
        self.n = n
        self.rng = np.random.default_rng(seed)
        self.th = np.zeros(n)
        self.thdot = np.zeros(n)
        self.t = np.zeros(n, dtype=int)

    def _obs(self) -> np.ndarray:
        return np.stack([np.cos(self.th), np.sin(self.th), self.thdot], axis=1)

    def _reset_idx(self, idx: np.ndarray) -> None:
        self.th[idx] = self.rng.uniform(-np.pi, np.pi, len(idx))
        self.thdot[idx] = self.rng.uniform(-1.0, 1.0, len(idx))
        self.t[idx] = 0

    def reset(self) -> np.ndarray:
        self._reset_idx(np.arange(self.n))
        return self._obs()

    @classmethod
    def dynamics(cls, th, thdot, u):
        """One Euler step of Pendulum-v1 from (theta, thetadot) with torque u (already clipped)."""
        cost = angle_normalize(th) ** 2 + 0.1 * thdot**2 + 0.001 * u**2
        new_thdot = thdot + (3 * cls.g / (2 * cls.l) * np.sin(th) + 3.0 / (cls.m * cls.l**2) * u) * cls.dt
        new_thdot = np.clip(new_thdot, -cls.max_speed, cls.max_speed)
        return th + new_thdot * cls.dt, new_thdot, -cost

    def step(self, action: np.ndarray):
        u = np.clip(np.asarray(action, dtype=float).reshape(self.n), -1.0, 1.0) * self.max_torque
        self.th, self.thdot, reward = self.dynamics(self.th, self.thdot, u)
        self.t += 1
        self.last_obs = self._obs()
        truncated = self.t >= self.horizon
        terminated = np.zeros(self.n, dtype=bool)
        if truncated.any():
            self._reset_idx(np.flatnonzero(truncated))
        return self._obs(), reward, terminated, truncated

    @classmethod
    def predict(cls, obs: np.ndarray, action: np.ndarray):
        """(next obs, reward) that the simulator gives from observation `obs` (n, 3) and action (n, 1):
        the dynamics-consistency reference for generated transitions (theta = atan2(sin, cos))."""
        th = np.arctan2(obs[:, 1], obs[:, 0])
        u = np.clip(action[:, 0], -1.0, 1.0) * cls.max_torque
        th2, thdot2, r = cls.dynamics(th, obs[:, 2], u)
        return np.stack([np.cos(th2), np.sin(th2), thdot2], axis=1), r


def pendulum_expert(obs: np.ndarray, t=None) -> np.ndarray:
    """Scripted expert in [-1, 1]: energy pumping towards E* = 15 (E = thetadot^2/2 + 15 cos theta, dE/dt = 3 u
    thetadot), then a PD balance near the top."""
    c, s, thdot = obs[:, 0], obs[:, 1], obs[:, 2]
    th = np.arctan2(s, c)
    energy = 0.5 * thdot**2 + 15.0 * c
    pump = 0.5 * (15.0 - energy) * thdot
    balance = -(10.0 * th + 2.0 * thdot)
    u = np.where((c > 0.85) & (np.abs(thdot) < 5.0), balance, pump)
    return np.clip(u / PendulumVec.max_torque, -1.0, 1.0)[:, None]


def gait_action(params: np.ndarray, t: np.ndarray, dt: float) -> np.ndarray:
    """Open-loop central-pattern-generator gait: a_j(t) = clip(amp_j sin(2 pi f t dt + phase_j), -1, 1) with
    params = (f, amp_1..k, phase_1..k); t (n,) integer steps -> actions (n, k)."""
    k = (len(params) - 1) // 2
    f, amp, phase = params[0], params[1 : 1 + k], params[1 + k :]
    return np.clip(amp[None, :] * np.sin(2 * np.pi * f * dt * np.asarray(t)[:, None] + phase[None, :]), -1.0, 1.0)


def train_gait(env_id: str, cfg: dict, seed: int) -> dict:
    """Cross-entropy search over gait parameters (the behaviour policies of the MuJoCo stand-in datasets, trained
    here): each iteration evaluates `population` samples and the current mean on `horizon`-step episodes from
    fixed start states, then refits mean and sd to the `elites` best. Returns the mean after every iteration
    ('snapshots', the D4RL-like training checkpoints) with its return ('returns')."""
    env = make_env(env_id, int(cfg["population"]) + 1, seed)
    k, dt = env.act_dim, env.dt
    rng = np.random.default_rng(seed)
    mu = np.r_[float(cfg["init_freq"]), np.full(k, 0.5), np.zeros(k)]
    sd = np.r_[0.5 * float(cfg["init_freq"]), np.full(k, 0.5), np.full(k, np.pi)]
    snapshots, returns = [], []
    for _ in range(int(cfg["iters"])):
        pop = mu + sd * rng.standard_normal((int(cfg["population"]), len(mu)))
        pop[:, 0] = np.clip(pop[:, 0], 0.1, 10.0)
        pop[:, 1 : 1 + k] = np.clip(pop[:, 1 : 1 + k], 0.0, 3.0)
        cand = np.concatenate([pop, mu[None]])
        env.reset()
        total = np.zeros(len(cand))
        for step in range(int(cfg["horizon"])):
            a = np.clip(cand[:, 1 : 1 + k] * np.sin(2 * np.pi * cand[:, :1] * dt * step + cand[:, 1 + k :]), -1, 1)
            _, r, term, trunc = env.step(a)
            total += r  # locomotion tasks used here do not terminate (HalfCheetah); horizon < time limit
        snapshots.append(mu.copy())
        returns.append(float(total[-1]))
        elite = pop[np.argsort(total[:-1])[-int(cfg["elites"]) :]]
        mu, sd = elite.mean(0), elite.std(0) + float(cfg["min_sd"])
    return {"snapshots": [s.tolist() for s in snapshots], "returns": returns}


def pick_gaits(search: dict, medium_fraction: float) -> dict:
    """'expert' = the best snapshot; 'medium' = the first snapshot whose return reaches medium_fraction of the
    expert's (D4RL: a policy stopped early at about a third of the expert's score)."""
    r = np.asarray(search["returns"])
    best = int(np.argmax(r))
    medium = int(np.flatnonzero(r >= medium_fraction * r[best])[0])
    return {
        "expert": search["snapshots"][best],
        "medium": search["snapshots"][medium],
        "expert_iter": best,
        "medium_iter": medium,
    }


def scripted_policy(kind: dict, rng: np.random.Generator, gaits: dict | None = None, dt: float = 0.0, act_dim: int = 1):
    """A D4RL-style behaviour policy: the expert's action (Pendulum: the scripted swing-up; MuJoCo: the gait of
    level kind['level'] from `gaits`; Bullet: the pretrained policy `gaits[level]`, a callable) with Gaussian noise
    `noise`, replaced by a uniform random action with probability `random_prob` (random_prob = 1 is the 'random'
    dataset)."""
    noise, p_rand = float(kind["noise"]), float(kind["random_prob"])
    level = kind.get("level", "expert")
    if p_rand >= 1.0:  # every action uniform: no behaviour policy is consulted (same random draws as below)
        base = lambda obs, t: np.zeros((len(obs), act_dim))  # noqa: E731
    elif gaits is None:
        base = pendulum_expert
    elif level not in gaits:
        raise ValueError(f"cfdg behaviour level {level!r} is not one of the behaviour policies {sorted(gaits)}")
    elif callable(gaits.get(level)):
        base = gaits[level]
    else:
        params = np.asarray(gaits[level])
        base = lambda obs, t: gait_action(params, t, dt)  # noqa: E731

    def act(obs: np.ndarray, t=None) -> np.ndarray:
        n = len(obs)
        a = base(obs, t) + noise * rng.standard_normal((n, act_dim))
        rand = rng.uniform(-1.0, 1.0, (n, act_dim))
        use_rand = rng.random((n, 1)) < p_rand
        return np.clip(np.where(use_rand, rand, a), -1.0, 1.0)

    return act


_MJ_SEEN: set = set()


def _route_mujoco_warnings() -> None:
    """MuJoCo prints its warnings (gymnasium's HalfCheetah XML triggers a 'settotalmass is deprecated' one on every
    load with mujoco 4) and appends them to MUJOCO_LOG.TXT in the working directory, i.e. the repository root
    under Snakemake; route each distinct warning once to the job's log instead."""
    try:
        import mujoco
    except ImportError:
        return
    if mujoco.get_mju_user_warning() is None:
        from methods.common.io import log

        def warn(msg: str) -> None:
            if msg not in _MJ_SEEN:
                _MJ_SEEN.add(msg)
                log(f"mujoco warning: {msg.strip()}")

        mujoco.set_mju_user_warning(warn)


@contextlib.contextmanager
def _quiet_c_stdout():
    """pybullet's C code prints its build time on import and 'argv[0]=' on every connection, to the process's
    stdout (the workflow's console under Snakemake): send what C prints meanwhile to the null device."""
    sys.stdout.flush()
    libc = ctypes.CDLL(None)
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            try:
                yield
            finally:
                libc.fflush(None)
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def is_bullet(env_id: str) -> bool:
    """A Bullet locomotion task of pybullet-envs-gymnasium (e.g. HopperBulletEnv-v0)."""
    return "BulletEnv" in env_id


class GymVec:
    """n gymnasium environments stepped in turn (Bullet tasks such as HopperBulletEnv-v0; MuJoCo tasks such as
    HalfCheetah-v5), with the PendulumVec interface. Actions in [-1, 1] are mapped affinely onto the env's action
    box. `predict` is None where the observation is not the simulator's state (Bullet: the pitch rate and the
    position along the track are not observed), so no dynamics error can be computed there.
    """

    def __init__(self, env_id: str, n: int, seed: int):
        try:
            import gymnasium as gym
        except ImportError as e:
            raise ImportError(
                f"cfdg env {env_id!r} needs gymnasium (and mujoco, imageio for MuJoCo tasks): "
                f"pip install 'gymnasium[mujoco]'; the tiny scale uses env 'pendulum'"
            ) from e
        if is_bullet(env_id):
            try:
                with _quiet_c_stdout():
                    import pybullet_envs_gymnasium  # noqa: F401  (registers the Bullet tasks with gymnasium)
            except ImportError as e:
                raise ImportError(
                    f"cfdg env {env_id!r} needs pybullet and pybullet-envs-gymnasium: "
                    "pip install pybullet==3.2.7 pybullet-envs-gymnasium==0.6.0 (both in the project's dependencies)"
                ) from e
            with _quiet_c_stdout():
                self.envs = [gym.make(env_id) for _ in range(n)]
                for e in self.envs:  # Bullet connects to its physics server on the first reset
                    e.reset(seed=seed)
        else:
            _route_mujoco_warnings()
            self.envs = [gym.make(env_id) for _ in range(n)]
        self.n, self.seed = n, seed
        space = self.envs[0].action_space
        self.low, self.high = space.low, space.high
        self.obs_dim = self.envs[0].observation_space.shape[0]
        self.act_dim = space.shape[0]
        self.horizon = self.envs[0].spec.max_episode_steps
        self.dt = float(getattr(self.envs[0].unwrapped, "dt", 0.0))  # the gaits' clock (MuJoCo tasks)
        self.t = np.zeros(n, dtype=int)
        if not hasattr(self.envs[0].unwrapped, "set_state"):
            self.predict = None

    def reset(self) -> np.ndarray:
        self.t[:] = 0
        return np.stack([e.reset(seed=self.seed + i)[0] for i, e in enumerate(self.envs)])

    def step(self, action: np.ndarray):
        scaled = self.low + (np.clip(action, -1, 1) + 1.0) * 0.5 * (self.high - self.low)
        out = [e.step(a) for e, a in zip(self.envs, scaled)]
        self.last_obs = np.stack([o[0] for o in out])
        obs, rew = self.last_obs.copy(), np.array([o[1] for o in out], dtype=float)
        term = np.array([o[2] for o in out])
        trunc = np.array([o[3] for o in out])
        self.t += 1
        for i in np.flatnonzero(term | trunc):
            obs[i] = self.envs[i].reset()[0]
            self.t[i] = 0
        return obs, rew, term, trunc

    def predict(self, obs: np.ndarray, action: np.ndarray):
        """Simulator's (next obs, reward) from an observation, for MuJoCo locomotion tasks whose observation is
        qpos[1:] ++ qvel (x position excluded, which the dynamics do not depend on)."""
        env = self.envs[0].unwrapped
        nq = env.model.nq
        scaled = self.low + (np.clip(action, -1, 1) + 1.0) * 0.5 * (self.high - self.low)
        nxt, rew = [], []
        for o, a in zip(obs, scaled):
            env.set_state(np.concatenate([[0.0], o[: nq - 1]]), o[nq - 1 :])
            o2, r, *_ = env.step(a)
            nxt.append(o2)
            rew.append(r)
        return np.stack(nxt), np.array(rew)


def make_env(env_id: str, n: int, seed: int):
    """`pendulum` -> PendulumVec (numpy, no dependency); anything else -> gymnasium.make(env_id) copies."""
    return PendulumVec(n, seed) if env_id == PENDULUM else GymVec(env_id, n, seed)


def rollout(env, policy, n_steps: int):
    """Transitions of `policy` for n_steps per env copy: dict of (n * n_steps, .) arrays and episode returns."""
    obs = env.reset()
    cols = {k: [] for k in ("obs", "act", "rew", "next_obs", "done")}
    ep_ret, returns = np.zeros(env.n), []
    for _ in range(n_steps):
        a = policy(obs, env.t.copy())
        nxt, r, term, trunc = env.step(a)
        cols["obs"].append(obs)
        cols["act"].append(a)
        cols["rew"].append(r)
        cols["next_obs"].append(env.last_obs.copy())
        cols["done"].append(term.astype(float))
        ep_ret += r
        for i in np.flatnonzero(term | trunc):
            returns.append(ep_ret[i])
            ep_ret[i] = 0.0
        obs = nxt
    data = {k: np.concatenate(v) for k, v in cols.items()}
    return data, np.asarray(returns)
