"""The claims step of the ALSpec DAG (rule alspec_claims): the flat metrics the criteria of claims.yaml read,
the verdicts, metrics_summary.json."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, read_json, write_json

from . import costmodel

DECLARATION = Path(__file__).with_name("claims.yaml")


def _at(rows, name, key):
    return rows["modes"][name][key]


def claims_metrics(task_files, lm_file, timing_file, lams, extrapolate_to: int) -> tuple[dict, dict]:
    """The flat {metric: value} dict the claims read, and the cost-model curves for the figure."""
    tasks = {read_json(f)["task"]: read_json(f) for f in task_files}
    lm = read_json(lm_file)
    timing = read_json(timing_file)
    m = {}
    for name, doc in {**tasks, "lm": lm}.items():
        for mode in doc["modes"]:
            key = mode.replace("alspec_", "alspec").replace(".", "")  # alspec_0.10 -> alspec010
            for metric in ("accuracy", "hit_rate", "approx_fraction", "agreement_generation", "perplexity"):
                if metric in doc["modes"][mode]:
                    m[f"{name}_{key}_{metric}"] = doc["modes"][mode][metric]
    strict = [f"alspec{lam:.2f}".replace(".", "") for lam in lams if lam <= 0.10 + 1e-9]
    long_range = [t for t in ("recall", "copy") if t in tasks]
    m["exact_long_range_min_accuracy"] = min(m[f"{t}_exact_accuracy"] for t in long_range)
    m["static_long_range_max_drop"] = max(m[f"{t}_exact_accuracy"] - m[f"{t}_static_accuracy"] for t in long_range)
    m["static_long_range_min_drop"] = min(m[f"{t}_exact_accuracy"] - m[f"{t}_static_accuracy"] for t in long_range)
    m["alspec_strict_max_accuracy_drop"] = max(
        m[f"{t}_exact_accuracy"] - m[f"{t}_{k}_accuracy"] for t in tasks for k in strict
    )
    m["alspec_long_range_min_drop"] = min(
        m[f"{t}_exact_accuracy"] - m[f"{t}_{k}_accuracy"] for t in long_range for k in strict
    )
    m["static_max_accuracy_drop"] = max(m[f"{t}_exact_accuracy"] - m[f"{t}_static_accuracy"] for t in tasks)
    m["static_min_agreement"] = min(
        m[f"{t}_static_agreement_generation"] for t in [*tasks, "lm"] if f"{t}_static_agreement_generation" in m
    )
    m["alspec_strict_max_ppl_ratio"] = max(m[f"lm_{k}_perplexity"] / m["lm_exact_perplexity"] for k in strict)
    m["static_ppl_ratio"] = m["lm_static_perplexity"] / m["lm_exact_perplexity"]
    m["alspec_strict_min_agreement"] = min(m[f"{t}_{k}_agreement_generation"] for t in [*tasks, "lm"] for k in strict)
    m["hit_local_lam010"] = m["local_alspec010_hit_rate"]
    m["hit_recall_lam010"] = m["recall_alspec010_hit_rate"]
    m["max_approx_fraction_strict"] = max(m[f"{t}_{k}_approx_fraction"] for t in [*tasks, "lm"] for k in strict)
    rows = timing["measured"]["by_hit_rate"]
    by_h = {r["hit_rate"]: r["speedup"] for r in rows}
    m["speedup_hit_max"] = by_h[max(by_h)]
    m["speedup_hit_min"] = by_h[min(by_h)]
    m["two_worker_tokens_identical"] = float(all(c["tokens_identical"] for c in timing["checks"].values()))
    k, t_comm = timing["kernels"], timing["measured"]["comm_round_trip_s"]
    seq = float(costmodel.attention_overhead(k, extrapolate_to, 1.0, t_comm, "sequential"))
    spec = float(costmodel.attention_overhead(k, extrapolate_to, 1.0, t_comm, "alspec"))
    m["overhead_reduction_128k"] = seq / spec
    m["overhead_sequential_128k"], m["overhead_alspec_128k"] = seq, spec
    grid = np.geomspace(min(k["contexts"]), extrapolate_to, 64)
    ratio = costmodel.attention_overhead(k, grid, 1.0, t_comm, "sequential") / costmodel.attention_overhead(
        k, grid, 1.0, t_comm, "alspec"
    )
    m["overhead_reduction_peak"] = float(ratio.max())
    m["overhead_reduction_peak_context"] = float(grid[ratio.argmax()])
    m["model_speedup_128k"] = float(
        costmodel.step_latency(k, extrapolate_to, 1.0, t_comm, "sequential")
        / costmodel.step_latency(k, extrapolate_to, 1.0, t_comm, "alspec")
    )
    ctx = timing["measured"]["context"]
    pred = {
        r["hit_rate"]: float(
            costmodel.step_latency(k, ctx, r["hit_rate"], t_comm, "sequential")
            / costmodel.step_latency(k, ctx, r["hit_rate"], t_comm, "alspec")
        )
        for r in rows
    }
    m["model_speedup_at_measured_context_hit_max"] = pred[max(pred)]
    return m, {"tasks": tasks, "lm": lm, "timing": timing}


def write_paper_claims(
    task_files, lm_file, timing_file, lams, extrapolate_to: int, scale: str, claims_path, summary_path
) -> dict:
    measured, _ = claims_metrics(task_files, lm_file, timing_file, lams, extrapolate_to)
    write_json(summary_path, measured)
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale)
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}")
    return doc
