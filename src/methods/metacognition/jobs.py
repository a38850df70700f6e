"""The experiment steps of metacognition: metacognition_tune (every agent tuned once, on tune_seeds) and
metacognition_evaluate (the tuned agents on the test seeds of one seed group: all seeds in one job at tiny scale,
one seed per job at paper scale).

Protocol (fixed before any run): every agent's own settings are tuned equally on `tune_seeds` (a
grid per agent: exploration and evaluation gain for the self-modelling agents, the fixed strategy for
the extrinsic loops) by mean competence over the run (AUC); the tuned agents are then compared on the
disjoint `seeds`. The stationary check repeats this in an environment without the switch, the new
family and the distractor.
"""

from __future__ import annotations

import itertools

import numpy as np

from methods.common.io import atomic_path, log, read_json, write_json

from .model import AGENTS, Agent, Environment, run

FIXED_LOOPS = ("round_robin", "weakest")
SETTINGS = {"changing": AGENTS, "stationary": ("metacognitive", *FIXED_LOOPS)}


def environments(environment: dict) -> dict[str, Environment]:
    """The changing environment and its stationary counterpart (no switch, no new family, no distractor)."""
    return {
        "changing": Environment.from_dict(environment),
        "stationary": Environment.from_dict(
            {**environment, "distractor": False, "switch_at": None, "new_family_at": None}
        ),
    }


def candidates(kind: str, agent: dict, grid: dict, n_strategies: int) -> list[tuple[dict, int]]:
    """(agent settings, fixed strategy) pairs tried for one agent kind."""
    if kind in FIXED_LOOPS:
        return [(agent, s) for s in range(n_strategies)]
    if kind == "random":  # random play has nothing to tune
        return [(agent, 0)]
    keys = ["epsilon"] + (["surprise_gain"] if kind != "no_evaluation" else [])
    return [({**agent, **dict(zip(keys, values))}, 0) for values in itertools.product(*(grid[k] for k in keys))]


def tune(kind: str, env: Environment, agent: dict, grid: dict, tune_seeds: list[int]) -> tuple[dict, int, float]:
    """The candidate with the highest mean AUC on the tuning seeds."""
    best = None
    for settings, strategy in candidates(kind, agent, grid, env.n_strategies):
        auc = float(run(kind, env, Agent.from_dict(settings), tune_seeds, strategy)["competence"].mean())
        if best is None or auc > best[2]:
            best = (settings, strategy, auc)
    return best


def tune_agents(
    environment: dict, agent: dict, grid: dict, tune_seeds: list[int], seeds: list[int], out_json: str
) -> None:
    """Step metacognition_tune: every agent's settings tuned on `tune_seeds` in both environments, written as
    {"tune_seeds", "changing": {agent: {settings, fixed_strategy, tune_auc}}, "stationary": {...}}. The test
    seeds are only checked to be disjoint from the tuning seeds."""
    if set(tune_seeds) & set(seeds):
        raise ValueError(f"metacognition.tune_seeds {tune_seeds} and seeds {seeds} must be disjoint")
    envs = environments(environment)
    doc = {"tune_seeds": list(tune_seeds)}
    for setting, kinds in SETTINGS.items():
        doc[setting] = {}
        for kind in kinds:
            settings, strategy, tune_auc = tune(kind, envs[setting], agent, grid, tune_seeds)
            doc[setting][kind] = {"settings": settings, "fixed_strategy": strategy, "tune_auc": tune_auc}
            log(
                f"{setting} {kind}: tuned epsilon {settings.get('epsilon')}, gain {settings.get('surprise_gain')}, "
                f"strategy {strategy} (tuning AUC {tune_auc:.3f})"
            )
    write_json(out_json, doc)


def evaluate_agents(environment: dict, tuned_json: str, seeds: list[int], out_json: str, out_npz: str) -> None:
    """Step metacognition_evaluate: the tuned agents on the test `seeds` (changing and stationary environments);
    per-seed outcomes (JSON) and competence curves (npz, arrays (seed, step))."""
    tuned = read_json(tuned_json)
    if set(tuned["tune_seeds"]) & set(seeds):
        raise ValueError(f"metacognition.tune_seeds {tuned['tune_seeds']} and seeds {seeds} must be disjoint")
    envs = environments(environment)
    doc = {"seeds": list(seeds), "agents": list(AGENTS), "changing": {}, "stationary": {}}
    curves = {}
    for setting, kinds in SETTINGS.items():
        env = envs[setting]
        for kind in kinds:
            t = tuned[setting][kind]
            r = run(kind, env, Agent.from_dict(t["settings"]), seeds, t["fixed_strategy"])
            comp = r["competence"]
            res = {
                **t,
                "auc": comp.mean(axis=1),
                "final": comp[:, -1],
                "on_distractor": r["on_distractor"].mean(axis=1),
                "calibration": r["calibration"],
            }
            if env.switch_at is not None:
                res["post_switch_auc"] = comp[:, env.switch_at :].mean(axis=1)
            doc[setting][kind], curves[f"{setting}/{kind}"] = res, comp
            log(f"{setting} {kind}: AUC {res['auc'].mean():.3f}")
    write_json(out_json, doc)
    with atomic_path(out_npz) as tmp, open(tmp, "wb") as f:
        np.savez_compressed(f, **curves)
