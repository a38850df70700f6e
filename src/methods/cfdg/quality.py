"""Generation quality (CFDG's claim that guided 'online' samples are closer to the online distribution than those
of a standard diffusion model): per seed, two models trained with the same budget,
  cfg      one conditional model on D_off U D_on with labels and null-label dropout (CFDG),
  union    an unconditional model on D_off U D_on (SynthER-style augmentation);
then 'online' samples (cfg at each guidance weight w) against held-out online transitions: RBF MMD^2, the AUC of
a k-NN classifier two-sample test, and the simulator's dynamics error of the generated (s, a, r, s').
`quality_job` is the DAG step (cfdg_quality) for one seed group; the models train and sample on the job's device."""

from __future__ import annotations

import time

import numpy as np
import torch

from methods.common.io import log, save_arrays, write_json

from .data import load_matrix
from .diffusion import NULL, OFFLINE, ONLINE, TransitionDiffusion
from .envs import make_env
from .metrics import c2st_auc, dynamics_error, median_bandwidth, rbf_mmd2

MODELS = ("cfg", "union")


def standardiser(x_ref: np.ndarray, d: int):
    """(z, kept columns): z(x) standardises the first d columns of x by x_ref's mean and sd, keeping only the
    columns that vary in x_ref."""
    keep = np.flatnonzero(x_ref[:, :d].std(0) > 0)
    mu, sd = x_ref[:, keep].mean(0), x_ref[:, keep].std(0)
    return (lambda x: (x[:, keep] - mu) / sd), keep


def run_quality(
    x_off: np.ndarray,
    x_on: np.ndarray,
    x_held: np.ndarray,
    obs_dim: int,
    act_dim: int,
    seeds: list[int],
    diff_cfg: dict,
    quality: dict,
    predict,
    seed: int,
    device: torch.device | None = None,
) -> dict:
    """Metrics[name][seed index] for every generated set, plus reference distances and 2-D-plot samples."""
    S, n_eval = len(seeds), int(quality["n_eval"])
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    union = np.concatenate([x_off, x_on])
    union_lab = np.r_[np.full(len(x_off), OFFLINE), np.full(len(x_on), ONLINE)]
    datasets, labels = [union] * (2 * S), [union_lab] * (2 * S)
    p_uncond = np.r_[np.full(S, float(diff_cfg["p_uncond"])), np.ones(S)]
    model = TransitionDiffusion(2 * S, x_off.shape[1], diff_cfg, gen, device)
    losses = model.fit(datasets, labels, p_uncond, int(quality["train_iters"]), int(diff_cfg["batch"]), rng)
    log(
        f"diffusion trained: {quality['train_iters']} steps, final loss {np.mean(losses[-50:]):.3f} "
        f"({time.perf_counter() - t0:.1f} s)"
    )

    # Generated sets: name -> (S, n_eval, D).
    generated = {}
    is_cfg = np.r_[np.ones(S, bool), np.zeros(S, bool)]
    for w in quality["w_grid"]:
        lab = np.where(is_cfg[:, None], ONLINE, NULL) * np.ones((1, n_eval), int)
        out = model.sample(lab, np.where(is_cfg, float(w), 0.0))
        generated[f"cfg_w{w:g}"] = out[:S]
        if w == quality["w_grid"][0]:
            generated["union"] = out[S:]
    lab_off = np.where(is_cfg[:, None], OFFLINE, NULL) * np.ones((1, n_eval), int)
    generated["cfg_offline_label"] = model.sample(lab_off, np.where(is_cfg, float(diff_cfg["guidance_w"]), 0.0))[:S]
    log(f"sampled ({time.perf_counter() - t0:.1f} s)")

    # Distances in the held-out online data's standardised units, without the done flag and without the
    # dimensions that never vary in the held-out data (Bullet's planar Hopper: its lateral velocity, roll and
    # direction to the target, in s and s'): standardised by a zero sd, a generator's round-off there would
    # be the whole distance and tie every generated set (none in MuJoCo's HalfCheetah).
    d = x_off.shape[1] - 1
    z, keep = standardiser(x_held, d)
    log(f"distances over {len(keep)} of {d} dimensions ({d - len(keep)} constant in the held-out online data)")
    held = x_held[rng.permutation(len(x_held))[:n_eval]]
    h = median_bandwidth(z(held))
    metrics: dict[str, list[float]] = {}

    def record(name, x, s_idx):
        metrics.setdefault(f"mmd_{name}", []).append(rbf_mmd2(z(x), z(held), h))
        metrics.setdefault(f"auc_{name}", []).append(c2st_auc(z(x), z(held), seed=s_idx))
        metrics.setdefault(f"mmd_train_{name}", []).append(
            rbf_mmd2(z(x), z(x_on[rng.permutation(len(x_on))[:n_eval]]), h)
        )
        if name not in ("real_online_train", "real_offline"):
            dyn_s, dyn_r = dynamics_error(x, obs_dim, act_dim, predict)
            metrics.setdefault(f"dyn_next_{name}", []).append(dyn_s)
            metrics.setdefault(f"dyn_rew_{name}", []).append(dyn_r)

    for s in range(S):
        for name, arr in generated.items():
            record(name, arr[s], s)
        record("real_online_train", x_on[rng.permutation(len(x_on))[:n_eval]], s)
        record("real_offline", x_off[rng.permutation(len(x_off))[:n_eval]], s)
    log(f"metrics ({time.perf_counter() - t0:.1f} s)")
    plot = {f"gen_{k}": v[0, :n_eval] for k, v in generated.items()}
    plot.update(real_offline=x_off[:n_eval], real_online_heldout=held)
    return {
        "metrics": metrics,
        "plot": plot,
        "wall_s": time.perf_counter() - t0,
        "final_loss": float(np.mean(losses[-50:])),
        "distance_dims": len(keep),
    }


def quality_job(
    offline_npz: str,
    online_npz: str,
    env_id: str,
    seeds: list[int],
    diffusion: dict,
    quality: dict,
    threads: int,
    out_json: str,
    out_npz: str,
    device: torch.device | None = None,
) -> None:
    """Step cfdg_quality: distances of generated 'online' samples to held-out online data, for one seed group
    (`{seeds}` wildcard; its random streams are seeded by the group's first seed)."""
    torch.set_num_threads(threads)
    x_off, obs_dim, act_dim = load_matrix(offline_npz)
    with np.load(online_npz) as f:
        x_on, x_held = f["train"], f["heldout"]
    predict = make_env(env_id, 1, 0).predict
    res = run_quality(
        x_off, x_on, x_held, obs_dim, act_dim, seeds, diffusion, quality, predict, seed=seeds[0], device=device
    )
    write_json(
        out_json,
        {
            "seeds": seeds,
            "guidance_w": diffusion["guidance_w"],
            "w_grid": quality["w_grid"],
            "metrics": res["metrics"],
            "wall_s": res["wall_s"],
            "final_loss": res["final_loss"],
            "distance_dims": res["distance_dims"],
        },
    )
    save_arrays(out_npz, {"obs_dim": obs_dim, "act_dim": act_dim, **res["plot"]})
