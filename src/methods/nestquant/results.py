"""The claims step of the NestQuant DAG (rule nestquant_claims): the flat metrics the criteria of claims.yaml
read (per seed), the verdicts, metrics_summary.json."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, read_json, write_json

from .evaluate import FP
from .synthetic import E8_GAIN_DB, errors_at_rate, gains_db

DECLARATION = Path(__file__).with_name("claims.yaml")


def claims_metrics(synthetic_files: list[str], lm_files: list[str], minilm_files: list[str], claim_q: int) -> dict:
    """Flat {metric: list over seeds} read by the criteria of claims.yaml."""
    measured: dict[str, list[float]] = {}

    def put(key, value):
        measured.setdefault(key, []).append(float(value))

    for f in synthetic_files:
        for dist, curves in read_json(f)["results"].items():
            for key in ("mse", "matmul"):
                for base, gain in gains_db(curves, claim_q, key).items():
                    put(f"synth_{dist}_{key}_gain_db_vs_{base}", gain)
                for name, err in errors_at_rate(curves, claim_q, key).items():
                    put(f"synth_{dist}_{key}_{name}", err)
                put(f"synth_{dist}_{key}_gain_db_vs_uniform_clipped_null", 0.0)  # the baseline against itself
                # a scalar quantizer's gain over the clipped uniform one at NestQuant's rate (the lattice removed)
                errs = errors_at_rate(curves, claim_q, key)
                power = 1 if key == "mse" else 2
                for name in ("rtn", "hadrtn"):
                    gain = 10 * power * math.log10(errs["uniform_clipped"] / errs[name])
                    put(f"synth_{dist}_{key}_gain_db_{name}_vs_uniform_clipped", gain)
                put(
                    f"synth_{dist}_{key}_best_scalar",
                    min(v for n, v in errors_at_rate(curves, claim_q, key).items() if n != "nestquant"),
                )
            put(f"synth_{dist}_rate_nestquant", next(p["rate"] for p in curves["nestquant"] if p["q"] == claim_q))
    for f in lm_files:
        run = read_json(f)
        res = run["results"]
        put("lm_perplexity_fp", res[FP]["perplexity"])
        for setting in (s for s in res if s != FP):
            for method, r in res[setting].items():
                put(f"lm_{setting}_perplexity_{method}", r["perplexity"])
                put(f"lm_{setting}_weight_error_{method}", r["weight_error"])
        for method, r in run["rates"].items():
            for kind, v in r.items():
                put(f"rate_{method}_{kind}", v)
        for key, v in run["trivial"].items():  # uniform / unigram / bigram next-token perplexity
            put(f"lm_perplexity_{key}", v)
    for f in minilm_files:
        put("minilm_fidelity_mean", read_json(f)["trivial"]["fidelity_mean"])  # the constant embedding
        res = read_json(f)["results"]
        for method, r in res.items():
            for key, v in r.items():
                put(f"minilm_{key}_{method}", math.nan if v is None else v)
    for setting in {k.split("_")[1] for k in measured if k.startswith("lm_w")}:
        p = lambda m: np.array(measured[f"lm_{setting}_perplexity_{m}"])  # noqa: E731
        fp = np.array(measured["lm_perplexity_fp"])
        for base, nq in (
            ("hadrtn_ldlq", "nestquant_ldlq"),
            ("hadrtn", "nestquant"),
            ("rtn", "nestquant_ldlq"),
            ("hadrtn_ldlq", "hadrtn17_ldlq"),
            ("hadrtn_ldlq", "hadrtn_ldlq"),
        ):  # hadrtn17_ldlq: a scalar quantizer at NestQuant's bits; the last: the baseline against itself
            measured[f"lm_{setting}_gap_reduction_{nq}_vs_{base}"] = list((p(base) - p(nq)) / (p(base) - fp))
    return measured


def write_paper_claims(
    synthetic_files: list[str],
    lm_files: list[str],
    minilm_files: list[str],
    claim_q: int,
    scale: str,
    claims_path: str,
    summary_path: str,
) -> None:
    measured = claims_metrics(synthetic_files, lm_files, minilm_files, claim_q)
    measured["e8_gain_db"] = E8_GAIN_DB
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale)
    write_claims(claims_path, doc)
    summary = {k: {"mean": float(np.mean(v)), "values": v} if isinstance(v, list) else v for k, v in measured.items()}
    write_json(summary_path, summary)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}")
