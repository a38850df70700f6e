"""The claims step of binary_denoising (binary_denoising_claims): the flat {metric: values over seeds} dict that
claims.yaml's criteria read, from the mixture, digits and exact-enumeration jobs, and the verdicts."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import read_json, write_json

from .exact import merged_exact_runs

DECLARATION_PATH = Path(__file__).with_name("claims.yaml")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr)


def exact_metrics(doc: dict) -> dict:
    """Metrics of one seed's exact enumeration of the one-stage chain (S1) (exact.exact_chain_metrics).

    high_noise / low_noise: the smallest / largest alpha of the grid (small alpha = high noise);
    eta_small / eta_large: the smallest / largest step size of the bias measurement."""
    rows = sorted(doc["rows"], key=lambda r: r["alpha"])
    etas = sorted(float(e) for e in doc["etas"])
    main = str(doc["eta"])
    high, low = rows[0], rows[-1]
    return {
        "slem_high_noise": high["slem"],
        "slem_low_noise": low["slem"],
        "dobrushin_high_noise": high["dobrushin"],
        "dobrushin_low_noise": low["dobrushin"],
        "rate_excess": max(r["slem"] - r["dobrushin"] for r in rows),
        "bias_high_noise": high["bias_tv"][main],
        "bias_low_noise": low["bias_tv"][main],
        "bias_eta_small": float(np.mean([r["bias_tv"][str(etas[0])] for r in rows])),
        "bias_eta_large": float(np.mean([r["bias_tv"][str(etas[-1])] for r in rows])),
        "mh_tv_max": max(max(r["mh_tv"].values()) for r in rows),
        "marginal_z_max": max(r["chain_marginal_z"] for r in rows),
        "z_bound": doc["z_bound"],
    }


def claims_metrics(mixture_files: list[str], digits_files: dict, exact_files: list[str]) -> dict:
    """The flat {metric: values over seeds} dict that claims.yaml's criteria read (the exact-enumeration
    metrics over the seeds of binary_denoising_exact's seed groups, one random mixture each)."""
    mix = [read_json(f) for f in mixture_files]
    per_seed = [exact_metrics(doc) for doc in merged_exact_runs(exact_files)]
    out = {k: [m[k] for m in per_seed] for k in per_seed[0]}
    alphas = mix[0]["alphas"]
    lo, hi = str(min(alphas)), str(max(alphas))  # lowest alpha = highest noise
    out["denoiser_gap_ratio"] = [
        np.mean([v["mse_learned"] / v["mse_naive"] for v in m["denoise"].values()]) for m in mix
    ]
    out["hamming_excess"] = [max(v["hamming_learned"] - v["hamming_bayes"] for v in m["denoise"].values()) for m in mix]
    for kind in ("langevin", "two_stage"):
        out[f"ess_{kind}_high_noise"] = [m["mixing"][lo][kind] for m in mix]
        out[f"ess_{kind}_low_noise"] = [m["mixing"][hi][kind] for m in mix]
    last = str(mix[0]["m_max"])
    for key in ("energy", "weight_tv"):
        out[f"{key}_m1_mixture"] = [m["quality"]["learned"]["1"][key] for m in mix]
        out[f"{key}_mlast_mixture"] = [m["quality"]["learned"][last][key] for m in mix]
        # nulls: one measurement at m_max's sampler budget, independent bits with the training marginals
        out[f"{key}_m1eq_mixture"] = [m["quality"]["learned"]["1_equal_budget"][key] for m in mix]
        out[f"{key}_marginals_mixture"] = [m["quality"]["learned"]["marginals"][key] for m in mix]
    for ds, files in digits_files.items():
        docs = [read_json(f) for f in files]
        last = str(docs[0]["m_max"])
        for key, short in (("energy", "energy"), ("classifier_score", "cscore")):
            out[f"{short}_m1_{ds}"] = [doc["quality"]["1"][key] for doc in docs]
            out[f"{short}_mlast_{ds}"] = [doc["quality"][last][key] for doc in docs]
            out[f"{short}_m1eq_{ds}"] = [doc["quality"]["1_equal_budget"][key] for doc in docs]
            out[f"{short}_marginals_{ds}"] = [doc["quality"]["marginals"][key] for doc in docs]
    return out


def write_paper_claims(
    mixture_files: list[str],
    digits_files: dict,
    exact_files: list[str],
    declaration: str,
    scale: str,
    claims_path: str,
    summary_path: str,
) -> None:
    measured = claims_metrics(mixture_files, digits_files, exact_files)
    doc = evaluate_claims(load_declaration(declaration), measured, scale, expand_over={"dataset": list(digits_files)})
    write_claims(claims_path, doc)
    write_json(summary_path, measured)
    for c in doc["claims"]:
        _log(f"{c['id']}: {c['verdict']}")
