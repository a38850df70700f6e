"""The simulation step of human_data (human_data_simulate): every platform design and the sensitivity sweep
for the seeds of one seed group (all seeds in one job at tiny scale, one seed per job at paper scale)."""

from __future__ import annotations

import numpy as np

from methods.common.io import atomic_path, log, write_json

from .model import Design, Population, World, simulate

CURVES = ("human_share", "accuracy", "retention", "quantity", "correct_human", "motivation")


def _window_mean(x: np.ndarray, window: int, late: bool) -> float:
    part = x[-window:] if late else x[:window]
    return float(np.nanmean(part)) if np.isfinite(part).any() else float("nan")


def summarize(curves: dict[str, np.ndarray], window: int) -> dict[str, float]:
    """Scalar outcomes of one run: early/late human share, late accuracy and retention, mean quantity."""
    return {
        "human_share_early": _window_mean(curves["human_share"], window, late=False),
        "human_share_late": _window_mean(curves["human_share"], window, late=True),
        "accuracy_late": _window_mean(curves["accuracy"], window, late=True),
        "retention_late": _window_mean(curves["retention"], window, late=True),
        "quantity": float(np.nanmean(curves["quantity"])),
        "correct_human": float(np.nanmean(curves["correct_human"])),
    }


def run_simulations(
    designs: dict,
    world: dict,
    population: dict,
    seeds: list[int],
    window: int,
    sweep: dict,
    out_json: str,
    out_npz: str,
) -> None:
    """Every design on every seed, and the sensitivity sweep (one world parameter at a time)."""
    w, pop = World.from_dict(world), Population.from_dict(population)
    if window > w.rounds // 2:
        raise ValueError(f"human_data.window={window} must be at most half of world.rounds={w.rounds}")
    ds = {name: Design.from_dict(d) for name, d in designs.items()}
    per_seed: dict[str, dict[str, list[float]]] = {name: {} for name in ds}
    curves = {}
    for name, design in ds.items():
        runs = [simulate(design, w, pop, s) for s in seeds]
        for k in CURVES:
            curves[f"{name}/{k}"] = np.stack([r[k] for r in runs])
        for r in runs:
            for k, v in summarize(r, window).items():
                per_seed[name].setdefault(k, []).append(v)
        log(
            f"{name}: human share {np.mean(per_seed[name]['human_share_early']):.2f} -> "
            f"{np.mean(per_seed[name]['human_share_late']):.2f}, retention {np.mean(per_seed[name]['retention_late']):.2f}"
        )
    # the paper's mechanism removed: motivation frozen (no crowding-out, no crowding-in), same designs,
    # population, seeds and rounds: what incentives alone do in the model
    static_world = World.from_dict({**world, "kappa": 0.0, "rho": 0.0})
    per_seed_static: dict[str, dict[str, list[float]]] = {name: {} for name in ds}
    for name, design in ds.items():
        for s in seeds:
            for k, v in summarize(simulate(design, static_world, pop, s), window).items():
                per_seed_static[name].setdefault(k, []).append(v)
    sweeps = {}
    for param, values in sweep["values"].items():
        if param not in world:
            raise ValueError(f"human_data.sweep.values: {param!r} is not a world parameter; known: {sorted(world)}")
        rows = []
        for v in values:
            wv = World.from_dict({**world, param: v})
            gaps = {}
            for name in sweep["designs"]:
                gaps[name] = [summarize(simulate(ds[name], wv, pop, s), window)["human_share_late"] for s in seeds]
            rows.append({"value": v, "human_share_late": gaps})
        sweeps[param] = rows
        log(f"sweep {param}: {values}")
    write_json(
        out_json,
        {
            "designs": sorted(ds),
            "seeds": list(seeds),
            "window": window,
            "per_seed": per_seed,
            "per_seed_static": per_seed_static,
            "sweep": {"designs": list(sweep["designs"]), "results": sweeps},
        },
    )
    with atomic_path(out_npz) as tmp, open(tmp, "wb") as f:
        np.savez_compressed(f, **curves)
