"""Step mm_alignment_claims: the measured metrics of the synthetic and real-data steps (their seed groups
merged in seed order) and the verdicts of claims.yaml."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..common.claims import evaluate_claims, load_declaration, write_claims
from ..common.io import log, read_json, write_json
from .metrics import METRICS

DECLARATION = Path(__file__).with_name("claims.yaml")


def merge_seed_groups(docs: list[dict]) -> dict:
    """The documents of one step's seed groups (one group of all seeds at tiny scale, one per seed at paper
    scale) as one: their runs concatenated in seed order, the rest from the first."""
    docs = sorted(docs, key=lambda d: min(r["seed"] for r in d["runs"]))
    return {**docs[0], "runs": [r for d in docs for r in d["runs"]]}


def read_groups(paths: list[str]) -> dict:
    """The merged document of one step's seed-group files."""
    return merge_seed_groups([read_json(p) for p in paths])


def synthetic_runs(synthetic_json: dict[int, list[str]]) -> list[dict]:
    """Every run of the synthetic study ({uniqueness: its seed groups' files}), by uniqueness then seed."""
    return [run for u in sorted(synthetic_json) for run in read_groups(synthetic_json[u])["runs"]]


def _number(value) -> float:
    """A stored statistic as a float; JSON null (a correlation undefined on too few points) is NaN."""
    return float("nan") if value is None else float(value)


def claims_metrics(synthetic_json: dict[int, list[str]], real_json: list[str]) -> dict[str, list[float]]:
    """Flat {metric: [value per seed]}: every per-run statistic of `experiments.correlations` per (U, D),
        its mean over the D grid per U, and the aliases claims.yaml reads: `_lowU` / `_highU` (smallest /
        largest uniqueness of the grid, mean over D), `_lowU_lowD` / `_lowU_highD` (smallest / largest
        heterogeneity at the smallest U); `mv_<statistic>` for the multi-view study (`multiview.pair_statistics`,
    per seed), or `real_<statistic>` for the image-halves stand-in."""
    runs = synthetic_runs(synthetic_json)
    us = sorted({r["uniqueness"] for r in runs})
    ds = sorted({r["hetero_depth"] for r in runs})
    seeds = sorted({r["seed"] for r in runs})
    get = {(r["uniqueness"], r["hetero_depth"], r["seed"]): r["correlations"] for r in runs}
    out: dict[str, list[float]] = {}
    keys = list(runs[0]["correlations"])
    for key in keys:
        for u in us:
            for d in ds:
                out[f"{key}_U{u}_D{d}"] = [_number(get[(u, d, s)][key]) for s in seeds]
            out[f"{key}_U{u}"] = [float(v) for v in np.mean([out[f"{key}_U{u}_D{d}"] for d in ds], axis=0)]
        out[f"{key}_lowU"] = out[f"{key}_U{us[0]}"]
        out[f"{key}_highU"] = out[f"{key}_U{us[-1]}"]
        out[f"{key}_lowU_lowD"] = out[f"{key}_U{us[0]}_D{ds[0]}"]
        out[f"{key}_lowU_highD"] = out[f"{key}_U{us[0]}_D{ds[-1]}"]
    real = read_groups(real_json)
    if "statistics" in real["runs"][0]:  # the multi-view study (kind mfeat): the statistics across view pairs
        for key in real["runs"][0]["statistics"]:
            out[f"mv_{key}"] = [_number(run["statistics"][key]) for run in real["runs"]]
    else:  # two halves of an image set
        for key in real["runs"][0]["correlations"]:
            out[f"real_{key}"] = [_number(run["correlations"][key]) for run in real["runs"]]
    out["uniqueness_grid"] = [float(u) for u in us]
    out["hetero_grid"] = [float(d) for d in ds]
    return out


def write_paper_claims(
    synthetic_json: dict[int, list[str]], real_json: list[str], scale: str, claims_path: str, summary_path: str
) -> None:
    """Step mm_alignment_claims: measured metrics and the verdicts of claims.yaml."""
    measured = claims_metrics(synthetic_json, real_json)
    write_json(summary_path, measured)
    doc = evaluate_claims(
        load_declaration(DECLARATION),
        {k: v for k, v in measured.items() if "grid" not in k},
        scale,
        expand_over={"metric": list(METRICS)},
    )
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
