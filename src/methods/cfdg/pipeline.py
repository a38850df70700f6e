"""Job functions of the cfdg rules (workflow/rules/cfdg.smk): data, quality, o2o, figures, claims."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import atomic_path, log, read_json, write_json

from .data import generate_dataset, load_dataset, transitions_matrix
from .envs import make_env, pick_gaits, train_gait
from .metrics import paired_t_interval
from .o2o import VARIANTS, run_o2o
from .quality import run_quality

DECLARATION = Path(__file__).with_name("claims.yaml")


def save_npz(path: str, **arrays) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)


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
    for name, policy in (("random", {"noise": 0.0, "random_prob": 1.0}),
                         ("expert", {"noise": 0.0, "random_prob": 0.0, "level": "expert"})):
        _, returns = generate_dataset(env_id, policy, n_envs * horizon, n_envs, seed + (name == "expert"), gaits)
        measured[name] = float(returns.mean())
    if reference["source"] == "fixed":
        out["measured"] = measured
    else:
        out.update(measured)
    return out


def behaviour_gaits(env_id: str, behaviour: dict | None, seed: int) -> dict | None:
    """MuJoCo tasks: the behaviour gaits (expert, medium snapshot) trained by cross-entropy search; None for
    Pendulum (its expert is scripted)."""
    if env_id == "pendulum":
        return None
    if behaviour is None:
        raise ValueError(f"config cfdg.behaviour is needed for scripted datasets on {env_id!r}")
    search = train_gait(env_id, behaviour, seed)
    gaits = pick_gaits(search, float(behaviour["medium_fraction"]))
    gaits["search_returns"] = search["returns"]
    log(f"gait search returns ({behaviour['horizon']}-step episodes): {np.round(search['returns'], 1).tolist()}; "
        f"expert = iteration {gaits['expert_iter']}, medium = iteration {gaits['medium_iter']}")
    return gaits


def data_job(env_id: str, datasets: dict, online: dict, reference: dict, seed: int, threads: int,
             out_dir: str, out_reference: str, behaviour: dict | None = None) -> None:
    """Step cfdg_data: behaviour policies (MuJoCo: gait search), offline datasets, the online train / held-out sets
    of the quality experiment, and the reference returns, all written as transition matrices (s, a, r, s', done)."""
    torch.set_num_threads(threads)
    specs = [*datasets.values(), *online.values()]
    needs_gaits = any(sp["source"] == "scripted" for sp in specs) or reference["source"] == "scripted"
    gaits = behaviour_gaits(env_id, behaviour, seed + 11) if needs_gaits else None
    stats = {}
    for i, (name, spec) in enumerate(sorted(datasets.items())):
        data, returns = load_dataset(spec, env_id, seed + 100 * i, gaits)
        save_npz(f"{out_dir}/offline_{name}.npz", x=transitions_matrix(data), obs_dim=data["obs"].shape[1],
                 act_dim=data["act"].shape[1])
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
    save_npz(f"{out_dir}/online.npz", train=x_train, heldout=x_held)
    ref = reference_returns(env_id, reference, seed + 9, gaits)
    ref["datasets"] = stats
    ref["gaits"] = gaits
    ref["online_behaviour_return"] = float(r_train.mean()) if len(r_train) else None
    log(f"reference returns: {ref}")
    write_json(out_reference, ref)


def _load_matrix(path: str):
    with np.load(path) as f:
        return f["x"], int(f["obs_dim"]), int(f["act_dim"])


def quality_job(offline_npz: str, online_npz: str, env_id: str, seeds: list[int], diffusion: dict, quality: dict,
                threads: int, out_json: str, out_npz: str) -> None:
    """Step cfdg_quality: distances of generated 'online' samples to held-out online data."""
    torch.set_num_threads(threads)
    x_off, obs_dim, act_dim = _load_matrix(offline_npz)
    with np.load(online_npz) as f:
        x_on, x_held = f["train"], f["heldout"]
    predict = make_env(env_id, 1, 0).predict
    res = run_quality(x_off, x_on, x_held, obs_dim, act_dim, seeds, diffusion, quality, predict, seed=seeds[0])
    write_json(out_json, {"seeds": seeds, "guidance_w": diffusion["guidance_w"], "w_grid": quality["w_grid"],
                          "metrics": res["metrics"], "wall_s": res["wall_s"], "final_loss": res["final_loss"]})
    save_npz(out_npz, obs_dim=obs_dim, act_dim=act_dim, **res["plot"])


def o2o_job(offline_npz: str, reference_json: str, env_id: str, seeds: list[int], iql: dict, diffusion: dict,
            o2o: dict, threads: int, out_json: str, out_npz: str) -> None:
    """Step cfdg_o2o: offline IQL, then online fine-tuning as IQL / + SynthER / + CFDG, normalised scores."""
    torch.set_num_threads(threads)
    x_off, obs_dim, act_dim = _load_matrix(offline_npz)
    ref = read_json(reference_json)
    res = run_o2o(x_off, env_id, obs_dim, act_dim, seeds, iql, diffusion, o2o, ref, seed=seeds[0])
    curves = res["curves"]
    final = {v: curves[i, :, -1].tolist() for i, v in enumerate(VARIANTS)}
    write_json(out_json, {"seeds": seeds, "final_score": final, "offline_score": curves[0, :, 0].tolist(),
                          "steps": res["steps"].tolist(), "n_retrain": res["n_retrain"],
                          "wall_s": {k: res[k] for k in ("t_offline", "t_diffusion", "t_total")}})
    save_npz(out_npz, curves=curves, steps=res["steps"], variants=np.array(VARIANTS))


def figures_job(o2o_npz: dict, quality_npz: str, curves_png: str, projection_png: str) -> None:
    """Step cfdg_figures: return curves with +-1 sd bands; a 2-D PCA projection of real and generated transitions."""
    from methods.common.plotting import new_figure, save_figure

    names = sorted(o2o_npz)
    fig, axes = new_figure(1, len(names), width=4.2 * len(names), height=3.4, squeeze=False)
    for ax, name in zip(axes[0], names):
        with np.load(o2o_npz[name]) as f:
            curves, steps, variants = f["curves"], f["steps"], list(f["variants"])
        for v, label in enumerate(variants):
            m, s = curves[v].mean(0), curves[v].std(0, ddof=1) if curves.shape[1] > 1 else 0 * curves[v].mean(0)
            ax.plot(steps, m, label=f"{label} (n={curves.shape[1]})")
            ax.fill_between(steps, m - s, m + s, alpha=0.2)
        ax.set(xlabel="online environment steps", ylabel="normalised score", title=f"offline data: {name}")
        ax.legend()
    save_figure(fig, curves_png)

    with np.load(quality_npz) as f:
        sets = {k: f[k] for k in f.files if k not in ("obs_dim", "act_dim")}
    d = sets["real_online_heldout"].shape[1] - 1
    ref = np.concatenate([sets["real_offline"][:, :d], sets["real_online_heldout"][:, :d]])
    mu, sd = ref.mean(0), ref.std(0) + 1e-6
    _, _, vt = np.linalg.svd((ref - mu) / sd, full_matrices=False)
    proj = lambda x: ((x[:, :d] - mu) / sd) @ vt[:2].T  # noqa: E731
    show = ["real_offline", "real_online_heldout", "gen_union"] + sorted(k for k in sets if k.startswith("gen_cfg_w"))
    fig, axes = new_figure(1, len(show), width=2.6 * len(show), height=2.8, squeeze=False, sharex=True, sharey=True)
    held = proj(sets["real_online_heldout"])
    for ax, key in zip(axes[0], show):
        if key != "real_online_heldout":
            ax.scatter(held[:, 0], held[:, 1], s=2, c="0.75", label="held-out online")
        p = proj(sets[key])
        ax.scatter(p[:, 0], p[:, 1], s=2, alpha=0.6)
        ax.set(title=key.replace("gen_", "generated ").replace("_", " "), xlabel="PC 1")
    axes[0][0].set_ylabel("PC 2")
    save_figure(fig, projection_png)


def claims_metrics(quality_json: str, o2o_json: dict) -> dict:
    """Flat {metric: value or per-seed list} read by claims.yaml."""
    q = read_json(quality_json)
    w = q["guidance_w"]
    m = q["metrics"]
    out = {k: v for k, v in m.items()}
    cf = f"cfg_w{w:g}"
    for kind in ("mmd", "auc", "dyn_next", "dyn_rew", "mmd_train"):
        out[f"{kind}_cfdg"] = m[f"{kind}_{cf}"]
        out[f"{kind}_synther"] = m[f"{kind}_union"]
    for name, path in sorted(o2o_json.items()):
        o = read_json(path)
        f = {v: np.asarray(o["final_score"][v]) for v in VARIANTS}
        for v in VARIANTS:
            out[f"score_{v}_{name}"] = f[v].tolist()
        out[f"score_offline_{name}"] = o["offline_score"]
        # paired intervals of CFDG against each baseline, and the nulls of the return claims: SynthER-style
        # augmentation in CFDG's place (against IQL) and plain IQL in CFDG's place (against SynthER)
        for a, b in (("cfdg", "iql"), ("cfdg", "synther"), ("synther", "iql"), ("iql", "synther")):
            mean, lo, hi = paired_t_interval(f[a] - f[b])
            out[f"diff_{a}_{b}_{name}"] = mean
            out[f"ci_low_{a}_{b}_{name}"] = lo
            out[f"ci_high_{a}_{b}_{name}"] = hi
        out[f"rel_gain_cfdg_iql_{name}"] = float((f["cfdg"].mean() - f["iql"].mean()) / abs(f["iql"].mean()))
    return out


def write_paper_claims(quality_json: str, o2o_json: dict, scale: str, claims_path: str, summary_path: str) -> None:
    """Step cfdg_claims: measured metrics and the verdicts of claims.yaml."""
    measured = claims_metrics(quality_json, o2o_json)
    write_json(summary_path, measured)
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale, expand_over={"dataset": sorted(o2o_json)})
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
