"""Jobs of the mm_alignment rules (workflow/rules/mm_alignment.smk): each reads plain parameters,
computes, and writes its outputs atomically. Scripts in workflow/scripts/mm_alignment/ call these."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ..common.claims import evaluate_claims, load_declaration, write_claims
from ..common.io import log, read_json, write_json
from .experiments import real_job_results, synthetic_job_results
from .metrics import METRICS

DECLARATION = Path(__file__).with_name("claims.yaml")


def synthetic_job(uniqueness: int, hetero_depths: list[int], seeds: list[int], generator: dict, encoder: dict,
                  train: dict, train_fixed: dict, align: dict, threads: int, out_json: str) -> None:
    """Step mm_alignment_synthetic: one uniqueness level, every heterogeneity depth and seed."""
    torch.set_num_threads(threads)
    res = synthetic_job_results(uniqueness, hetero_depths, seeds, generator, encoder, train, train_fixed, align)
    write_json(out_json, res)


def real_job(source: dict, seeds: list[int], encoder: dict, train: dict, align: dict, threads: int,
             out_json: str) -> None:
    """Step mm_alignment_real: the two-view real-data stand-in."""
    torch.set_num_threads(threads)
    write_json(out_json, real_job_results(source, seeds, encoder, train, align))


def _synthetic_runs(synthetic_json: dict[int, str]) -> list[dict]:
    return [run for u in sorted(synthetic_json) for run in read_json(synthetic_json[u])["runs"]]


def _number(value) -> float:
    """A stored statistic as a float; JSON null (a correlation undefined on too few points) is NaN."""
    return float("nan") if value is None else float(value)


def claims_metrics(synthetic_json: dict[int, str], real_json: str) -> dict[str, list[float]]:
    """Flat {metric: [value per seed]}: every per-run statistic of `experiments.correlations` per (U, D),
    its mean over the D grid per U, and the aliases claims.yaml reads: `_lowU` / `_highU` (smallest /
    largest uniqueness of the grid, mean over D), `_lowU_lowD` / `_lowU_highD` (smallest / largest
    heterogeneity at the smallest U); `real_<statistic>` for the real-data stand-in."""
    runs = _synthetic_runs(synthetic_json)
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
    real = read_json(real_json)
    for key in real["runs"][0]["correlations"]:
        out[f"real_{key}"] = [_number(run["correlations"][key]) for run in real["runs"]]
    out["uniqueness_grid"] = [float(u) for u in us]
    out["hetero_grid"] = [float(d) for d in ds]
    return out


def write_paper_claims(synthetic_json: dict[int, str], real_json: str, scale: str, claims_path: str,
                       summary_path: str) -> None:
    """Step mm_alignment_claims: measured metrics and the verdicts of claims.yaml."""
    measured = claims_metrics(synthetic_json, real_json)
    write_json(summary_path, measured)
    doc = evaluate_claims(load_declaration(DECLARATION), {k: v for k, v in measured.items() if "grid" not in k},
                          scale, expand_over={"metric": list(METRICS)})
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
