"""What each step of the metacognition DAG does (workflow/rules/metacognition.smk); one function per script.

Protocol (fixed before any run): every agent's own settings are tuned equally on `tune_seeds` (a
grid per agent: exploration and evaluation gain for the self-modelling agents, the fixed strategy for
the extrinsic loops) by mean competence over the run (AUC); the tuned agents are then compared on the
disjoint `seeds`. The stationary check repeats this in an environment without the switch, the new
family and the distractor.
"""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import atomic_path, log, read_json, write_json
from methods.common.plotting import new_figure, save_figure

from .model import AGENTS, Agent, Environment, run

DECLARATION = Path(__file__).with_name("claims.yaml")
FIXED_LOOPS = ("round_robin", "weakest")


def candidates(kind: str, agent: dict, grid: dict, n_strategies: int) -> list[tuple[dict, int]]:
    """(agent settings, fixed strategy) pairs tried for one agent kind."""
    if kind in FIXED_LOOPS:
        return [(agent, s) for s in range(n_strategies)]
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


def _evaluate(kind, env, agent, grid, tune_seeds, seeds, window_from):
    settings, strategy, tune_auc = tune(kind, env, agent, grid, tune_seeds)
    r = run(kind, env, Agent.from_dict(settings), seeds, strategy)
    comp = r["competence"]
    out = {"settings": settings, "fixed_strategy": strategy, "tune_auc": tune_auc,
           "auc": comp.mean(axis=1), "final": comp[:, -1], "on_distractor": r["on_distractor"].mean(axis=1),
           "calibration": r["calibration"]}
    if window_from is not None:
        out["post_switch_auc"] = comp[:, window_from:].mean(axis=1)
    return out, comp


def run_experiment(environment: dict, agent: dict, grid: dict, tune_seeds: list[int], seeds: list[int],
                   out_json: str, out_npz: str) -> None:
    """Tuned agents on the changing environment and on its stationary counterpart."""
    if set(tune_seeds) & set(seeds):
        raise ValueError(f"metacognition.tune_seeds {tune_seeds} and seeds {seeds} must be disjoint")
    env = Environment.from_dict(environment)
    stationary = Environment.from_dict({**environment, "distractor": False, "switch_at": None, "new_family_at": None})
    doc = {"seeds": list(seeds), "agents": list(AGENTS), "changing": {}, "stationary": {}}
    curves = {}
    for kind in AGENTS:
        res, comp = _evaluate(kind, env, agent, grid, tune_seeds, seeds, env.switch_at)
        doc["changing"][kind], curves[f"changing/{kind}"] = res, comp
        log(f"{kind}: AUC {res['auc'].mean():.3f} (tuned {res['settings'].get('epsilon')}, "
            f"gain {res['settings'].get('surprise_gain')}, strategy {res['fixed_strategy']})")
    for kind in ("metacognitive", *FIXED_LOOPS):
        res, comp = _evaluate(kind, stationary, agent, grid, tune_seeds, seeds, None)
        doc["stationary"][kind], curves[f"stationary/{kind}"] = res, comp
        log(f"stationary {kind}: AUC {res['auc'].mean():.3f}")
    write_json(out_json, doc)
    with atomic_path(out_npz) as tmp, open(tmp, "wb") as f:
        np.savez_compressed(f, **curves)


def make_figures(metrics_json: str, curves_npz: str, switch_at: int | None, new_family_at: int | None,
                 curves_png: str, ablation_png: str) -> None:
    doc = read_json(metrics_json)
    with np.load(curves_npz, allow_pickle=False) as z:
        curves = {k: z[k] for k in z.files}
    fig, axes = new_figure(1, 2, width=11, height=3.6)
    colors = {kind: f"C{i}" for i, kind in enumerate(AGENTS)}  # one colour per agent in both panels
    for ax, setting in zip(axes, ("changing", "stationary")):
        for kind in doc[setting]:
            c = curves[f"{setting}/{kind}"]
            # the full agent drawn dashed on top: a tuned ablation can coincide with it
            style = {"ls": "--", "lw": 2.2, "zorder": 3} if kind == "metacognitive" else {}
            ax.plot(c.mean(axis=0), label=kind, color=colors[kind], **style)
        if setting == "changing":
            for x, label in ((switch_at, "strategies switch"), (new_family_at, "new family")):
                if x is not None:
                    ax.axvline(x, color="grey", ls="--", lw=0.8)
                    ax.text(x, 0.02, label, fontsize=7, rotation=90, va="bottom")
        ax.set_xlabel("practice step")
        ax.set_ylabel("mean competence (learnable families)")
        ax.set_title(f"{setting} environment (illustrative)")
        ax.legend(fontsize=7)
    save_figure(fig, curves_png)

    fig, ax = new_figure(width=6, height=3.6)
    kinds = list(doc["changing"])
    aucs = [doc["changing"][k]["auc"] for k in kinds]
    ax.bar(kinds, [np.mean(a) for a in aucs], yerr=[np.std(a) for a in aucs], capsize=3)
    ax.set_ylabel("AUC of mean competence (test seeds)")
    ax.set_title("fixed loops, the metacognitive agent and its ablations")
    ax.tick_params(axis="x", rotation=30)
    save_figure(fig, ablation_png)


def claims_metrics(doc: dict) -> dict:
    """Flat per-seed metrics for claims.yaml."""
    m: dict = {}
    for setting, prefix in (("changing", ""), ("stationary", "stationary_")):
        for kind, res in doc[setting].items():
            for key in ("auc", "post_switch_auc", "on_distractor", "calibration"):
                if key in res:
                    m[f"{prefix}{key}_{kind}"] = res[key]
    st = doc["stationary"]
    m["stationary_best_fixed_auc"] = list(np.maximum.reduce([np.asarray(st[k]["auc"]) for k in FIXED_LOOPS]))
    return m


def write_paper_claims(metrics_json: str, scale: str, claims_path: str, summary_path: str) -> None:
    m = claims_metrics(read_json(metrics_json))
    write_json(summary_path, m)
    write_claims(claims_path, evaluate_claims(load_declaration(DECLARATION), m, scale))
