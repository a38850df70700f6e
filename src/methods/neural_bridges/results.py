"""The claims step of neural_bridges: the flat metrics claims.yaml reads, from every seed group's outputs,
and the verdicts (claims.json, metrics.json)."""

from __future__ import annotations

import math
from pathlib import Path

import torch

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, write_json

from .groups import read_arrays, read_metrics
from .metrics import marginal_w1

DECLARATION = Path(__file__).with_name("claims.yaml")


def _nan_for_null(value):
    """JSON stores NaN (not measured) as null; the criteria want NaN back."""
    if isinstance(value, list):
        return [math.nan if v is None else v for v in value]
    return math.nan if value is None else value


def pcn_other_seed_w1(pcn_marginals) -> list[float]:
    """Per seed s: mean W1 between pCN's marginals (at T/4, T/2, 3T/4, both coordinates) of seed s and of the
    next seed (cyclically): pCN agreeing with itself across independent chains and noise, the premise of the
    pCN comparisons. pcn_marginals (S, n, 3, d), seeds in order."""
    x = torch.as_tensor(pcn_marginals)
    S = len(x)
    return [marginal_w1(x[s], x[(s + 1) % S], [0, 1, 2]) for s in range(S)]


def claims_metrics(
    linear_json: dict[str, list[str]], cell_json: dict[str, list[str]], cell_npz: dict[str, list[str]]
) -> dict:
    """Flat {metric: value or per-seed list} read by claims.yaml's criteria; every input is a list of
    seed-group files in seed order."""
    out = {}
    for process, paths in linear_json.items():
        m = read_metrics(paths)
        for key in (
            "kl_neural",
            "kl_guided",
            "kl_optimal",
            "loss_se_neural",
            "mean_err_neural",
            "var_err_neural",
            "mean_err_guided",
            "var_err_guided",
            "mean_err_optimal",
            "var_err_optimal",
            "mean_err_forward",
            "var_err_forward",
            "ess_guided",
        ):
            out[f"{key}_{process}"] = m[key]
        out[f"bound_{process}"] = m["bound"]
    for event, paths in cell_json.items():
        m = read_metrics(paths)
        for key, val in m.items():
            if key.startswith(
                (
                    "w1_",
                    "mode_fraction_",
                    "ess_",
                    "pcn_acceptance",
                    "loss_",
                    "cost_ratio_",
                    "brute_force_kept",
                    "score_start_error",
                )
            ):
                out[f"{key}_{event}"] = val
        pcn = read_arrays(cell_npz[event])["pcn_marginals"]
        out[f"w1_pcn_pcn_other_seed_{event}"] = pcn_other_seed_w1(pcn)
    return {k: _nan_for_null(v) for k, v in out.items()}


def write_paper_claims(
    linear_json: dict[str, list[str]],
    cell_json: dict[str, list[str]],
    cell_npz: dict[str, list[str]],
    scale: str,
    claims_path: str,
    summary_path: str,
) -> None:
    """Step neural_bridges_claims: measured metrics and the verdicts of claims.yaml."""
    measured = claims_metrics(linear_json, cell_json, cell_npz)
    write_json(summary_path, measured)
    doc = evaluate_claims(
        load_declaration(DECLARATION),
        measured,
        scale,
        expand_over={"process": sorted(linear_json), "event": ["normal", "rare"]},
    )
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
