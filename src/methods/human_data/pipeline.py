"""What each step of the human_data DAG does (workflow/rules/human_data.smk); one function per script."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import atomic_path, log, read_json, write_json
from methods.common.plotting import new_figure, save_figure

from .model import Design, Population, World, simulate

DECLARATION = Path(__file__).with_name("claims.yaml")
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


def frontier_margin(point: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    """How far `point` (quantity, quality) lies above the straight line through designs a and b, in
    quality units at the point's quantity (positive: above the a-b quantity-quality frontier)."""
    (xa, ya), (xb, yb), (x, y) = a, b, point
    if xa == xb:
        return y - max(ya, yb)
    return y - (ya + (yb - ya) * (x - xa) / (xb - xa))


def run_simulations(designs: dict, world: dict, population: dict, seeds: list[int], window: int,
                    sweep: dict, out_json: str, out_npz: str) -> None:
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
        log(f"{name}: human share {np.mean(per_seed[name]['human_share_early']):.2f} -> "
            f"{np.mean(per_seed[name]['human_share_late']):.2f}, retention {np.mean(per_seed[name]['retention_late']):.2f}")
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
    write_json(out_json, {"designs": sorted(ds), "seeds": list(seeds), "window": window, "per_seed": per_seed,
                          "sweep": {"designs": list(sweep["designs"]), "results": sweeps}})
    with atomic_path(out_npz) as tmp, open(tmp, "wb") as f:
        np.savez_compressed(f, **curves)


def make_figures(metrics_json: str, curves_npz: str, time_png: str, frontier_png: str, sweep_png: str) -> None:
    doc = read_json(metrics_json)
    with np.load(curves_npz, allow_pickle=False) as z:
        curves = {k: z[k] for k in z.files}
    fig, axes = new_figure(1, 3, width=12, height=3.4)
    for ax, key, label in zip(axes, ("human_share", "accuracy", "retention"),
                              ("share of genuinely human labels", "label accuracy", "retention")):
        for name in doc["designs"]:
            c = curves[f"{name}/{key}"]
            mean = np.nanmean(c, axis=0)
            ax.plot(mean, label=name)
            ax.fill_between(np.arange(len(mean)), np.nanmin(c, axis=0), np.nanmax(c, axis=0), alpha=0.15)
        ax.set_xlabel("round")
        ax.set_title(label)
    axes[0].legend()
    fig.suptitle("Illustrative simulation (the project's model, not data from the paper)")
    save_figure(fig, time_png)

    fig, ax = new_figure(width=5, height=4)
    for name in doc["designs"]:
        ps = doc["per_seed"][name]
        ax.scatter(ps["quantity"], ps["human_share_late"], label=name, alpha=0.7)
    ax.set_xlabel("labels per contributor per round (quantity)")
    ax.set_ylabel("human share of labels, last rounds (quality)")
    ax.set_title("quantity vs quality per design (one point per seed)")
    ax.legend()
    save_figure(fig, frontier_png)

    sweeps = doc["sweep"]["results"]
    fig, axes = new_figure(1, len(sweeps), width=4 * len(sweeps), height=3.4, squeeze=False)
    for ax, (param, rows) in zip(axes[0], sweeps.items()):
        xs = [r["value"] for r in rows]
        for name in doc["sweep"]["designs"]:
            ax.plot(xs, [np.mean(r["human_share_late"][name]) for r in rows], marker="o", label=name)
        ax.set_xlabel(param)
        ax.set_ylabel("human share, last rounds")
    axes[0][0].legend()
    save_figure(fig, sweep_png)


def sweep_tag(param: str, value: float) -> str:
    """Metric-name tag of one sweep point: kappa 0.03 -> kappa_0p03."""
    return f"{param}_{value}".replace(".", "p").replace("-", "m")


def claims_metrics(doc: dict, reference: dict) -> dict:
    """Flat metrics per seed that claims.yaml reads."""
    m: dict = {}
    ps = doc["per_seed"]
    for name, vals in ps.items():
        for k, v in vals.items():
            m[f"{k}_{name}"] = v
    a, b, c = reference["frontier_a"], reference["frontier_b"], reference["above"]
    m["frontier_margin"] = [frontier_margin((ps[c]["quantity"][i], ps[c]["human_share_late"][i]),
                                            (ps[a]["quantity"][i], ps[a]["human_share_late"][i]),
                                            (ps[b]["quantity"][i], ps[b]["human_share_late"][i]))
                            for i in range(len(doc["seeds"]))]
    # the a-b line's human share at c's quantity: the frontier c is compared with (the claim's null)
    m["frontier_line_at_" + c] = [ps[c]["human_share_late"][i] - m["frontier_margin"][i] for i in range(len(doc["seeds"]))]
    others = [n for n in ps if n != reference["unpaid"]]
    m["best_other_accuracy"] = [max(ps[n]["accuracy_late"][i] for n in others) for i in range(len(doc["seeds"]))]
    m["least_other_quantity"] = [min(ps[n]["quantity"][i] for n in others) for i in range(len(doc["seeds"]))]
    hi, lo = reference["gap_designs"]
    for param, rows in doc["sweep"]["results"].items():
        for r in rows:
            tag = sweep_tag(param, r["value"])
            for name, vals in r["human_share_late"].items():
                m[f"human_share_late_{name}_{tag}"] = vals
            m[f"gap_{tag}"] = [x - y for x, y in zip(r["human_share_late"][hi], r["human_share_late"][lo])]
    return m


def write_paper_claims(metrics_json: str, reference: dict, scale: str, claims_path: str, summary_path: str) -> None:
    doc = read_json(metrics_json)
    m = claims_metrics(doc, reference)
    write_json(summary_path, m)
    write_claims(claims_path, evaluate_claims(load_declaration(DECLARATION), m, scale))
