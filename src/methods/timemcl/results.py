"""The claims step of TimeMCL: the flat per-seed metrics claims.yaml reads, from every seed group's
evaluation and toy files, and the verdicts (claims.json, metrics.json)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, read_json, write_json

DECLARATION = Path(__file__).with_name("claims.yaml")

# evaluation metric -> the short name used in claims.yaml ("<short>_<dataset>_<method>")
METRIC_NAMES = {
    "distortion": "distortion",
    "crps": "crps",
    "crps_sum": "crpssum",
    "mixture_rmse": "rmse",
    "total_variation": "tv",
}


# the real-data nulls measured at the main K (evaluate.evaluate_seed) and the toy's (experiments.run_toy)
NULL_METHODS = ("k1", "untrained", "train_mean")
TOY_NULLS = ("k1", "untrained", "naive")


def per_seed_docs(files: list[str], key: str) -> list[dict]:
    """The per-seed documents of seed-group files ({"seeds", key: [one document per seed]})."""
    return [d for f in files for d in read_json(f)[key]]


def claims_metrics(
    main_files: list[str],
    toy_files: list[str],
    sweep_json: str,
    datasets: list[str],
    variants: list[str],
    primary: str,
    official_toy_json: str,
) -> dict[str, list[float]]:
    """The flat metric dict the claims in claims.yaml read; one value per seed (seeds sorted). main_files
    are the evaluate step's seed-group files, toy_files the toy step's."""
    m: dict[str, list[float]] = {}

    def put(name, value):
        m.setdefault(name, []).append(float(value))

    main = per_seed_docs(main_files, "evaluations")
    seeds = sorted({d["seed"] for d in main})
    for seed in seeds:
        docs = {d["dataset"]: d for d in main if d["seed"] == seed}
        missing = [ds for ds in datasets if ds not in docs]
        assert not missing, f"no evaluation of {missing} for seed {seed} among {main_files}"
        docs = {ds: docs[ds] for ds in datasets}
        ratios = []
        for ds, doc in docs.items():
            methods = {**doc["methods"], "timemcl": doc["methods"][primary]}
            # the claims' nulls (evaluate_seed): k1 (the primary variant with K = 1), untrained, train_mean
            nulls = [n for n in NULL_METHODS if n in methods]
            for name in [*variants, "timemcl", "deepar", "seasonal_naive", *nulls]:
                for metric, short in METRIC_NAMES.items():
                    put(f"{short}_{ds}_{name}", methods[name][metric])
            ratios.append(methods[primary]["inference_seconds"] / methods["deepar"]["inference_seconds"])
            other = methods[primary].get("other_rollout")
            if other is not None:  # the primary variant under the other rollout rule (not read by a claim)
                put(f"distortion_{ds}_timemcl_other_rollout", other["distortion"])
                put(f"crpssum_{ds}_timemcl_other_rollout", other["crps_sum"])
        for v in [*variants, *(["untrained"] if all("untrained" in d["methods"] for d in docs.values()) else [])]:
            put(f"collapsed_{v}", sum(doc["methods"][v]["collapsed_heads"] for doc in docs.values()))
        put("inference_ratio_to_deepar", math.exp(np.mean(np.log(ratios))))

    toy_docs = per_seed_docs(toy_files, "runs")
    for seed in seeds:
        docs = [d for d in toy_docs if d["seed"] == seed]
        put("toy_worst_ratio", max(d["distortion"]["ratio_to_reference"][primary] for d in docs))
        put("toy_deepar_worst_ratio", max(d["distortion"]["ratio_to_reference"]["deepar"] for d in docs))
        put("toy_timemcl_distortion", np.mean([d["distortion"][primary] for d in docs]))
        put("toy_deepar_distortion", np.mean([d["distortion"]["deepar"] for d in docs]))
        for name in TOY_NULLS:  # the toy's nulls (experiments.run_toy): k1, untrained, naive
            if all(name in d["distortion"] for d in docs):
                put(f"toy_{name}_worst_ratio", max(d["distortion"]["ratio_to_reference"][name] for d in docs))
                put(f"toy_{name}_distortion", np.mean([d["distortion"][name] for d in docs]))
        for d in docs:
            put(f"toy_{d['process']}_ratio", d["distortion"]["ratio_to_reference"][primary])

    toy_seeds = {d["seed"]: d for d in read_json(official_toy_json)["seeds"]}
    for seed in seeds:
        d = toy_seeds[seed]
        put("official_toy_ratio", d["distortion_ratio"])
        put("official_toy_min_win_rate", d["min_win_rate"])
        put("official_toy_score_gap", d["score_mass_gap_mean"])
        put("official_toy_K", d["K"])
        put("official_toy_untrained_ratio", d["untrained"]["distortion_ratio"])
        put("official_toy_untrained_min_win_rate", d["untrained"]["min_win_rate"])
        put("official_toy_untrained_score_gap", d["untrained"]["score_mass_gap_mean"])
        put("official_toy_uniform_score_gap", d["uniform_score_gap_mean"])
        put("official_toy_naive_ratio", d["naive_distortion_ratio"])
        put("official_toy_wta_min_win_rate", d["wta"]["min_win_rate"])

    table = read_json(sweep_json)["table"]
    rows = sorted((r for r in table if r["key"] == primary), key=lambda r: r["K"])
    m["sweep_timemcl_first"] = rows[0]["values"]
    m["sweep_timemcl_last"] = rows[-1]["values"]
    return m


def write_paper_claims(
    main_files, toy_files, sweep_json, datasets, variants, primary, scale, claims_path, summary_path, official_toy_json
) -> None:
    """Step timemcl_claims: measured metrics and the verdicts of claims.yaml."""
    measured = claims_metrics(main_files, toy_files, sweep_json, datasets, variants, primary, official_toy_json)
    write_json(summary_path, measured)
    doc = evaluate_claims(
        load_declaration(DECLARATION),
        measured,
        scale,
        expand_over={"dataset": datasets},
        extra={"primary_variant": primary},
    )
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}")
