"""From the simulation's seed groups to the numbers the claims and figures read: the groups merged in seed order
(one job per seed at paper scale gives the document of one job over all seeds), the frontier margin and the
flat per-seed metric dict of claims.yaml."""

from __future__ import annotations

from methods.common.io import read_json


def merge_seed_groups(files: list[str]) -> dict:
    """The simulation document of all seeds from those of its seed groups (files in seed order): seeds joined,
    every per-seed list (outcomes per design, sweep results) concatenated. A single file is returned as it is."""
    docs = [read_json(f) for f in files]
    out = docs[0]
    for doc in docs[1:]:
        out["seeds"] = out["seeds"] + doc["seeds"]
        for key in ("per_seed", "per_seed_static"):
            for name, vals in doc[key].items():
                for k, v in vals.items():
                    out[key][name][k] = out[key][name][k] + v
        for param, rows in doc["sweep"]["results"].items():
            for row, more in zip(out["sweep"]["results"][param], rows):
                for name, v in more["human_share_late"].items():
                    row["human_share_late"][name] = row["human_share_late"][name] + v
    return out


def frontier_margin(point: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    """How far `point` (quantity, quality) lies above the straight line through designs a and b, in
    quality units at the point's quantity (positive: above the a-b quantity-quality frontier)."""
    (xa, ya), (xb, yb), (x, y) = a, b, point
    if xa == xb:
        return y - max(ya, yb)
    return y - (ya + (yb - ya) * (x - xa) / (xb - xa))


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
    static = doc["per_seed_static"]  # motivation frozen (kappa = rho = 0): the mechanism's ablation
    for name, vals in static.items():
        for k, v in vals.items():
            m[f"{k}_{name}_static"] = v
    m["frontier_line_at_" + c + "_static"] = [
        static[c]["human_share_late"][i]
        - frontier_margin(
            (static[c]["quantity"][i], static[c]["human_share_late"][i]),
            (static[a]["quantity"][i], static[a]["human_share_late"][i]),
            (static[b]["quantity"][i], static[b]["human_share_late"][i]),
        )
        for i in range(len(doc["seeds"]))
    ]
    others = [n for n in static if n != reference["unpaid"]]
    m["least_other_quantity_static"] = [min(static[n]["quantity"][i] for n in others) for i in range(len(doc["seeds"]))]
    m["frontier_margin"] = [
        frontier_margin(
            (ps[c]["quantity"][i], ps[c]["human_share_late"][i]),
            (ps[a]["quantity"][i], ps[a]["human_share_late"][i]),
            (ps[b]["quantity"][i], ps[b]["human_share_late"][i]),
        )
        for i in range(len(doc["seeds"]))
    ]
    # the a-b line's human share at c's quantity: the frontier c is compared with (the claim's null)
    m["frontier_line_at_" + c] = [
        ps[c]["human_share_late"][i] - m["frontier_margin"][i] for i in range(len(doc["seeds"]))
    ]
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
