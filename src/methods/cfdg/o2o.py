"""Offline-to-online loop: IQL pre-trained offline, then fine-tuned online as plain IQL, IQL + SynthER-style
unconditional augmentation, or IQL + CFDG (CFDG paper, Algorithm 1).

All S seeds x 3 variants run as one ensemble of E = 3 S agents, each in its own copy of the environment. The
offline phase is shared: the three variants of seed s start online from the same pre-trained agent (paired
comparison). Every online step: each agent acts (stochastic policy), stores the transition in its own online
buffer, and takes one IQL update on a batch whose first `synthetic_fraction` rows come from its synthetic buffer
(augmented variants, once one exists) and the rest uniformly from D_off U D_on. Every `retrain_every` online
steps the diffusion models are (re)trained on D_off U D_on of their agent and the synthetic buffers regenerated:
SynthER unconditionally; CFDG with labels online:offline = ratio : 1 - ratio (the reweighting) and guidance w.

`o2o_job` is the DAG step (cfdg_o2o) for one offline dataset and one seed group (`{seeds}` wildcard: all seeds at
tiny scale, one per job at paper scale; the group's random streams are seeded by its first seed). The agents and the
diffusion models run on the job's device; the simulator on the CPU.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from methods.common.io import log, read_json, save_arrays, write_json

from .data import load_matrix, split_matrix
from .diffusion import NULL, OFFLINE, ONLINE, TransitionDiffusion
from .envs import make_env
from .iql import IQLEnsemble
from .metrics import normalised_score

VARIANTS = ("iql", "synther", "cfdg")


def evaluate(agent: IQLEnsemble, env_id: str, n_episodes: int, seed: int, ref: dict) -> np.ndarray:
    """Normalised score of each member's deterministic policy, mean over n_episodes episodes (same start states
    for every member and every evaluation: common random numbers)."""
    E = agent.E
    env = make_env(env_id, E * n_episodes, seed)
    obs = env.reset()
    total, alive = np.zeros(E * n_episodes), np.ones(E * n_episodes, dtype=bool)
    for _ in range(env.horizon):
        a = agent.act(obs.reshape(E, n_episodes, -1), deterministic=True).reshape(E * n_episodes, -1)
        obs, r, term, trunc = env.step(a)
        total += r * alive
        alive &= ~(term | trunc)
        if not alive.any():
            break
    return normalised_score(total.reshape(E, n_episodes).mean(1), ref["random"], ref["expert"])


def to_batch(rows: np.ndarray, obs_dim: int, act_dim: int, reward_scale: float) -> dict:
    """(E, B, D) transition rows -> IQL batch tensors."""
    parts = split_matrix(rows.reshape(-1, rows.shape[-1]), obs_dim, act_dim)
    E, B = rows.shape[:2]
    out = {k: torch.as_tensor(v, dtype=torch.float32).reshape(E, B, -1) for k, v in parts.items()}
    out["rew"] = out["rew"].squeeze(-1) * reward_scale
    out["done"] = out["done"].squeeze(-1)
    return out


def sample_rows(
    rng, x_off: np.ndarray, online: np.ndarray, n_on: int, synthetic: np.ndarray | None, n_syn: np.ndarray, batch: int
) -> np.ndarray:
    """Batch rows per agent: n_syn[e] from its synthetic buffer, the rest uniformly from D_off U D_on[e]."""
    E, n_off = online.shape[0], len(x_off)
    idx = rng.integers(0, n_off + n_on, (E, batch))
    from_off = idx < n_off
    rows = np.where(
        from_off[..., None],
        x_off[np.minimum(idx, n_off - 1)],
        online[np.arange(E)[:, None], np.clip(idx - n_off, 0, None)],
    )
    if synthetic is not None and n_syn.any():
        sidx = rng.integers(0, synthetic.shape[1], (E, batch))
        syn_rows = synthetic[np.arange(E)[:, None], sidx]
        use = np.arange(batch)[None, :] < n_syn[:, None]
        rows = np.where(use[..., None], syn_rows, rows)
    return rows


def run_o2o(
    x_off: np.ndarray,
    env_id: str,
    obs_dim: int,
    act_dim: int,
    seeds: list[int],
    iql_cfg: dict,
    diff_cfg: dict,
    o2o: dict,
    ref: dict,
    seed: int,
    device: torch.device | None = None,
) -> dict:
    """The whole offline-to-online experiment; returns curves (V, S, n_evals) of normalised scores and timings."""
    S, V = len(seeds), len(VARIANTS)
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    scale = float(iql_cfg["reward_scale"])
    B = int(iql_cfg["batch"])
    t0 = time.perf_counter()

    # Offline pre-training (one agent per seed).
    pre = IQLEnsemble(S, obs_dim, act_dim, iql_cfg, gen, device)
    empty = np.zeros((S, 1, x_off.shape[1]), dtype=np.float32)
    for i in range(int(o2o["offline_updates"])):
        rows = sample_rows(rng, x_off, empty, 0, None, np.zeros(S, int), B)
        losses = pre.update(to_batch(rows, obs_dim, act_dim, scale))
        if (i + 1) % 1000 == 0:
            log(f"offline update {i + 1}: " + ", ".join(f"{k}={v:.3g}" for k, v in losses.items()))
    t_offline = time.perf_counter() - t0

    # Online fine-tuning: E = V * S agents, member v * S + s starts from seed s's pre-trained agent.
    E = V * S
    agent = IQLEnsemble(E, obs_dim, act_dim, iql_cfg, gen, device)
    agent.load_members(pre, np.tile(np.arange(S), V))
    variant_of = np.repeat(np.arange(V), S)
    eval_seed = seed + 10_000
    n_steps, eval_every = int(o2o["online_steps"]), int(o2o["eval_every"])
    n_ep = int(o2o["eval_episodes"])
    curves, steps = [evaluate(agent, env_id, n_ep, eval_seed, ref)], [0]

    D = x_off.shape[1]
    online = np.zeros((E, n_steps, D), dtype=np.float32)
    n_syn_rows = np.where(variant_of > 0, int(round(B * float(o2o["synthetic_fraction"]))), 0)
    synthetic, syn_ready = None, np.zeros(E, dtype=bool)
    aug_agents = np.flatnonzero(variant_of > 0)  # synther members then cfdg members
    p_uncond = np.where(variant_of[aug_agents] == 1, 1.0, float(diff_cfg["p_uncond"]))
    w = np.where(variant_of[aug_agents] == 1, 0.0, float(diff_cfg["guidance_w"]))
    diff = TransitionDiffusion(len(aug_agents), D, diff_cfg, gen, device)
    env = make_env(env_id, E, seed + 1)
    obs = env.reset()
    t_diff, n_retrain = 0.0, 0
    for step in range(n_steps):
        a = agent.act(obs[:, None, :], deterministic=False)[:, 0]
        nxt, r, term, trunc = env.step(a)
        online[:, step] = np.concatenate([obs, a, r[:, None], env.last_obs, term[:, None].astype(float)], 1)
        obs = nxt
        n_on = step + 1
        if n_on % int(o2o["retrain_every"]) == 0 and n_on < n_steps:
            td = time.perf_counter()
            synthetic = regenerate(
                diff, x_off, online, n_on, aug_agents, variant_of, p_uncond, w, diff_cfg, o2o, rng, first=n_retrain == 0
            )
            syn_ready[aug_agents] = True
            n_retrain += 1
            t_diff += time.perf_counter() - td
            log(f"online step {n_on}: diffusion retrained ({time.perf_counter() - td:.1f} s)")
        rows = sample_rows(rng, x_off, online, n_on, synthetic, n_syn_rows * syn_ready, B)
        agent.update(to_batch(rows, obs_dim, act_dim, scale))
        if n_on % eval_every == 0:
            curves.append(evaluate(agent, env_id, n_ep, eval_seed, ref))
            steps.append(n_on)
            means = [curves[-1][variant_of == v].mean() for v in range(V)]
            log(f"online step {n_on}: score " + ", ".join(f"{n}={m:.1f}" for n, m in zip(VARIANTS, means)))
    curves = np.stack(curves, axis=1).reshape(V, S, -1)
    return {
        "curves": curves,
        "steps": np.asarray(steps),
        "t_offline": t_offline,
        "t_diffusion": t_diff,
        "t_total": time.perf_counter() - t0,
        "n_retrain": n_retrain,
    }


def regenerate(diff, x_off, online, n_on, aug_agents, variant_of, p_uncond, w, diff_cfg, o2o, rng, first):
    """(Re)train the augmentation models on D_off U D_on and fill every agent's synthetic buffer."""
    E_all, n_gen = online.shape[0], int(o2o["n_synthetic"])
    datasets = [np.concatenate([x_off, online[e, :n_on]]) for e in aug_agents]
    labels = [np.r_[np.full(len(x_off), OFFLINE), np.full(n_on, ONLINE)] for _ in aug_agents]
    iters = int(diff_cfg["train_iters"] if first else o2o["retrain_iters"])
    diff.fit(datasets, labels, p_uncond, iters, int(diff_cfg["batch"]), rng)
    n_online_label = int(round(n_gen * float(o2o["online_ratio"])))
    lab = np.where(np.arange(n_gen) < n_online_label, ONLINE, OFFLINE)
    gen_labels = np.where((variant_of[aug_agents] == 1)[:, None], NULL, lab[None, :])
    samples = diff.sample(gen_labels, w)
    synthetic = np.zeros((E_all, n_gen, x_off.shape[1]), dtype=np.float32)
    synthetic[aug_agents] = samples
    return synthetic


def o2o_job(
    offline_npz: str,
    reference_json: str,
    env_id: str,
    seeds: list[int],
    iql: dict,
    diffusion: dict,
    o2o: dict,
    threads: int,
    out_json: str,
    out_npz: str,
    device: torch.device | None = None,
) -> None:
    """Step cfdg_o2o: offline IQL, then online fine-tuning as IQL / + SynthER / + CFDG, normalised scores, for one
    seed group."""
    torch.set_num_threads(threads)
    x_off, obs_dim, act_dim = load_matrix(offline_npz)
    ref = read_json(reference_json)
    res = run_o2o(x_off, env_id, obs_dim, act_dim, seeds, iql, diffusion, o2o, ref, seed=seeds[0], device=device)
    curves = res["curves"]
    final = {v: curves[i, :, -1].tolist() for i, v in enumerate(VARIANTS)}
    write_json(
        out_json,
        {
            "seeds": seeds,
            "final_score": final,
            "offline_score": curves[0, :, 0].tolist(),
            "steps": res["steps"].tolist(),
            "n_retrain": res["n_retrain"],
            "wall_s": {k: res[k] for k in ("t_offline", "t_diffusion", "t_total")},
        },
    )
    save_arrays(out_npz, {"curves": curves, "steps": res["steps"], "variants": np.array(VARIANTS)})
