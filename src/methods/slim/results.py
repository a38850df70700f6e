"""The claims step of the SLiM DAG (rule slim_claims): the flat metrics the criteria of claims.yaml read
(per calibration seed), the verdicts, metrics_summary.json."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, read_json, write_json

DECLARATION = Path(__file__).with_name("claims.yaml")
DENSE = "dense"


def load_runs(files: list[str]) -> list[dict]:
    return [read_json(f)["results"] for f in files]


def num(v) -> float:
    """A measured value read back from JSON (null = not measured, e.g. an undefined correlation)."""
    return math.nan if v is None else float(v)


def claims_metrics(lm_files: list[str], minilm_files: list[str], speed_json: str, speed_shape: list[int]) -> dict:
    """Flat {metric: list over seeds or scalar} read by the criteria of claims.yaml."""
    lm, mini = load_runs(lm_files), load_runs(minilm_files)
    measured = {}
    for runs, prefix, key in ((lm, "lm", "perplexity"), (mini, "minilm", "fidelity")):
        for name in runs[0]:
            measured[f"{prefix}_{key}_{name}"] = [num(r[name][key]) for r in runs]
            if name != DENSE:
                measured[f"{prefix}_error_{name}"] = [num(r[name]["output_error"]) for r in runs]
    # trivial alternatives (nulls): uniform / unigram / bigram next-token perplexity on the same test windows,
    # the constant (mean) embedding's fidelity
    for key in ("uniform", "unigram", "bigram"):
        measured[f"lm_perplexity_{key}"] = [num(read_json(f)["trivial"][key]) for f in lm_files]
    measured["minilm_fidelity_mean"] = [num(read_json(f)["trivial"]["fidelity_mean"]) for f in minilm_files]
    for name in mini[0]:
        for key in ("wordsim353", "simlex999"):
            if key in mini[0][name]:
                measured[f"minilm_{key}_{name}"] = [num(r[name][key]) for r in mini]
    s = read_json(speed_json)
    n, k = speed_shape
    for e in s["layers"]:
        if (e["n"], e["k"]) == (n, k):
            t = e["seconds"]
            measured[f"layer_speedup_m{e['m']}"] = t["dense_fp32"] / t["slim_2_4_int4_lora"]
            measured[f"layer_speedup_nolora_m{e['m']}"] = t["dense_fp32"] / t["slim_2_4_int4"]
            measured[f"layer_speedup_vs_bf16_m{e['m']}"] = t["dense_bf16"] / t["slim_2_4_int4_lora"]
    tps = s["decode_tokens_per_s"]
    measured["decode_speedup_vs_fp32"] = tps["slim"] / tps["dense_fp32"]
    measured["decode_speedup_vs_bf16"] = tps["slim"] / tps["dense_bf16"]
    measured["memory_ratio_reference"] = s["memory_reference"]["ratio"]
    measured["memory_ratio_small"] = s["memory_small"]["ratio"]
    measured["compiled_kernels"] = float(s["compiled_kernels"])
    return measured


def write_paper_claims(
    lm_files: list[str],
    minilm_files: list[str],
    speed_json: str,
    speed_shape: list[int],
    scale: str,
    claims_path: str,
    summary_path: str,
) -> None:
    measured = claims_metrics(lm_files, minilm_files, speed_json, speed_shape)
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale)
    write_claims(claims_path, doc)
    summary = {k: {"mean": float(np.mean(v)), "values": v} if isinstance(v, list) else v for k, v in measured.items()}
    write_json(summary_path, summary)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}")
