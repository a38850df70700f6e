"""What each DAG step of neural_bridges does (one function per script in workflow/scripts/neural_bridges/)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import load_arrays, log, read_json, save_arrays, write_json

from .experiments import cell_experiment, linear_experiment
from .figures import cell_figure, linear_figure

DECLARATION = Path(__file__).with_name("claims.yaml")






def linear_job(process: str, spec: dict, eps: float, seeds: list[int], hidden: list[int], train: dict, n_eval: int,
               eval_times: list[float], threads: int, out_json: str, out_npz: str) -> None:
    """Step neural_bridges_linear: one closed-form bridge (Brownian or OU)."""
    torch.set_num_threads(threads)
    log(f"{process}: spec {spec}, seeds {seeds}, train {train}")
    metrics, arrays = linear_experiment(process, spec, eps, seeds, hidden, train, n_eval, eval_times, log)
    save_arrays(out_npz, arrays, dtype=np.float64)
    write_json(out_json, {"process": process, "spec": spec, "seeds": seeds, **metrics})


def cell_job(event_name: str, cell: dict, event: dict, seeds: list[int], hidden: list[int], train: dict, eta: float,
             threads: int, out_json: str, out_npz: str) -> None:
    """Step neural_bridges_cell: one conditioning event of the cell model."""
    torch.set_num_threads(threads)
    log(f"cell {event_name}: {event}, seeds {seeds}, train {train}")
    metrics, arrays = cell_experiment(event_name, cell, event, seeds, hidden, train, eta, log)
    save_arrays(out_npz, arrays, dtype=np.float64)
    write_json(out_json, {"event": event_name, "spec": event, "seeds": seeds, **metrics})


def figures_job(linear_npz: dict[str, str], cell_npz: dict[str, str], linear_png: str, cell_png: str) -> None:
    """Step neural_bridges_figures."""
    linear_figure({k: load_arrays(v) for k, v in linear_npz.items()}, linear_png)
    cell_figure({k: load_arrays(v) for k, v in cell_npz.items()}, cell_png)


def _nan_for_null(value):
    """JSON stores NaN (not measured) as null; the criteria want NaN back."""
    if isinstance(value, list):
        return [math.nan if v is None else v for v in value]
    return math.nan if value is None else value


def claims_metrics(linear_json: dict[str, str], cell_json: dict[str, str]) -> dict:
    """Flat {metric: value or per-seed list} read by claims.yaml's criteria."""
    out = {}
    for process, path in linear_json.items():
        m = read_json(path)
        for key in ("kl_neural", "kl_guided", "kl_optimal", "loss_se_neural", "mean_err_neural", "var_err_neural",
                    "mean_err_guided", "var_err_guided", "mean_err_optimal", "var_err_optimal", "ess_guided"):
            out[f"{key}_{process}"] = m[key]
        out[f"bound_{process}"] = m["bound"]
    for event, path in cell_json.items():
        m = read_json(path)
        for key, val in m.items():
            if key.startswith(("w1_", "mode_fraction_", "ess_", "pcn_acceptance", "loss_", "cost_ratio_",
                               "brute_force_kept", "score_start_error")):
                out[f"{key}_{event}"] = val
    return {k: _nan_for_null(v) for k, v in out.items()}


def write_paper_claims(linear_json: dict[str, str], cell_json: dict[str, str], scale: str, claims_path: str,
                       summary_path: str) -> None:
    """Step neural_bridges_claims: measured metrics and the verdicts of claims.yaml."""
    measured = claims_metrics(linear_json, cell_json)
    write_json(summary_path, measured)
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale,
                          expand_over={"process": sorted(linear_json), "event": ["normal", "rare"]})
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
