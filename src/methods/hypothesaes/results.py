"""Step hypothesaes_claims: the measured metrics (per seed, over the seed groups of each dataset), the
verdicts of claims.yaml, the figure and its data, and the table of top hypotheses."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import atomic_path, log, read_json, write_json

from .figures import plot_methods, write_recovery_csv

DECLARATION = Path(__file__).with_name("claims.yaml")
BASELINES = ("pca", "raw", "lda")
NULL_METHODS = ("random_dirs", "untrained_sae")  # trivial nulls: random directions, the untrained SAE's neurons


def merge_results(paths: list[str]) -> dict:
    """One dataset's results over its seed groups (one results file per group: all seeds at tiny scale, one
    seed each at paper scale), runs and datasets in seed order."""
    docs = [read_json(p) for p in paths]
    merged = {k: v for k, v in docs[0].items() if k not in ("datasets", "runs")}
    merged["datasets"] = sorted((d for doc in docs for d in doc["datasets"]), key=lambda d: d["seed"])
    merged["runs"] = sorted((r for doc in docs for r in doc["runs"]), key=lambda r: r["seed"])
    return merged


def _per_seed(runs: list[dict], method: str, key: str) -> list[float]:
    return [float(r[key]) for r in sorted(runs, key=lambda r: r["seed"]) if r["method"] == method]


def _present(runs: list[dict], methods) -> list[str]:
    return [m for m in methods if any(r["method"] == m for r in runs)]


def claims_metrics(synthetic: dict, real_sets: dict[str, dict | None], synthetic10: dict | None = None) -> dict:
    """Flat {metric: values per seed} that claims.yaml reads. Synthetic designs: seed s is its own draw s.
    `synthetic10` (the first design, 10 concepts) gives the same metrics with the suffix `_first`; each real
    set of `real_sets` (`real`, `convention`, `rotten`) gives nsig/r2 with its name as suffix. The best
    baseline is the per-seed maximum over the baselines that ran."""
    m = {}
    for result, suffix in ((synthetic, ""), (synthetic10, "_first")):
        if result is None:
            continue
        for method in _present(result["runs"], ("sae", *BASELINES, *NULL_METHODS)):
            m[f"f1_{method}{suffix}"] = _per_seed(result["runs"], method, "recovery_f1")
            m[f"nsig_{method}_synthetic{suffix}"] = _per_seed(result["runs"], method, "n_significant")
        m[f"f1_best_baseline{suffix}"] = list(
            np.max([m[f"f1_{b}{suffix}"] for b in _present(result["runs"], BASELINES)], axis=0)
        )
    for name, result in real_sets.items():
        if result is None:
            continue
        for method in _present(result["runs"], ("sae", *BASELINES, *NULL_METHODS)):
            m[f"nsig_{method}_{name}"] = _per_seed(result["runs"], method, "n_significant")
            m[f"r2_{method}_{name}"] = _per_seed(result["runs"], method, "test_r2")
        baselines = [m[f"nsig_{b}_{name}"] for b in _present(result["runs"], BASELINES)]
        m[f"nsig_best_baseline_{name}"] = list(np.max(baselines, axis=0))
    return m


def top_hypotheses_table(result: dict, seed: int, title: str) -> str:
    run = next(r for r in result["runs"] if r["method"] == "sae" and r["seed"] == seed)
    lines = [
        f"### {title} (SAE, seed {seed}; test R² {run['test_r2']:.3f}, {run['n_significant']} of "
        f"{run['n_distinct']} distinct hypotheses significant at p < {run['bonferroni_threshold']:.4g})",
        "",
        "| neuron | hypothesis | annotation F1 | selection coef | held-out coef | p-value |",
        "|---|---|---|---|---|---|",
    ]
    for h in sorted(run["hypotheses"], key=lambda h: h["test_pvalue"]):
        star = " **\\***" if h["significant"] else ""
        lines.append(
            f"| {h['feature']} | {h['hypothesis']}{star} | {h['f1']:.2f} | {h['selection_coef']:+.3f} | "
            f"{h['test_coef']:+.3f} | {h['test_pvalue']:.2g} |"
        )
    return "\n".join(lines)


def _design_summary(result: dict) -> dict:
    """Per draw: the reference concepts and how close each is to a principal direction (design diagnostic)."""
    out = {}
    for d in result["datasets"]:
        al = d.get("concept_pc_alignment") or {}
        out[str(d["seed"])] = {
            "reference": d["reference"],
            "reference_pc_alignment": {r: al.get(r) for r in d["reference"]},
            "max_concept_pc_corr": max((a["max_abs_corr"] for a in al.values()), default=None),
        }
    return out


# the real sets and the title of each one's table of top hypotheses
REAL_TITLES = {
    "real": "Real text",
    "convention": "2012 convention paragraphs (y = 1: Democrat)",
    "rotten": "Rotten Tomatoes snippets (y = 1: fresh)",
}


def write_paper_claims(
    synthetic_jsons: list[str],
    real_jsons: dict[str, list[str]],
    scale: str,
    claims_path: str,
    summary_path: str,
    figure_path: str,
    figure_csv: str,
    table_path: str,
    synthetic10_jsons: list[str] | None = None,
) -> None:
    """Step hypothesaes_claims: measured metrics, verdicts of claims.yaml, figure (and its CSV) and hypothesis
    table. Each dataset's results come as one file per seed group (`merge_results`); `real_jsons` maps each
    real set (`real` first; `convention`, `rotten` where they ran) to its files."""
    synthetic = merge_results(synthetic_jsons)
    synthetic10 = merge_results(synthetic10_jsons) if synthetic10_jsons else None
    reals = {name: merge_results(paths) for name, paths in real_jsons.items() if paths}
    real = reals["real"]
    measured = claims_metrics(synthetic, reals, synthetic10)
    ratios = {
        name: [
            a / b if b else float("nan")
            for a, b in zip(measured[f"nsig_sae_{name}"], measured[f"nsig_best_baseline_{name}"])
        ]
        for name in reals
    }
    results = [(n, r) for n, r in (("synthetic", synthetic), ("synthetic10", synthetic10), *reals.items()) if r]
    sae_seconds = {name: _per_seed(res["runs"], "sae", "method_seconds") for name, res in results}
    write_json(
        summary_path,
        {
            **measured,
            "designs": {
                "synthetic": _design_summary(synthetic),
                **({"synthetic10": _design_summary(synthetic10)} if synthetic10 else {}),
            },
            **{f"nsig_ratio_sae_to_best_baseline_{n}": r for n, r in ratios.items()},
            "sae_path_seconds_per_seed": sae_seconds,
            "embed_seconds": {name: [d["embed_seconds"] for d in res["datasets"]] for name, res in results},
        },
    )
    plot_methods(measured, figure_path)
    write_recovery_csv(measured, figure_csv)
    seed = min(r["seed"] for r in real["runs"])
    reference = next(d["reference"] for d in synthetic["datasets"] if d["seed"] == seed)
    table = "\n\n".join(
        [
            top_hypotheses_table(
                synthetic, seed, f"Synthetic, draw {seed} (planted concepts; reference: " + ", ".join(reference) + ")"
            ),
            *(top_hypotheses_table(res, seed, REAL_TITLES.get(name, name)) for name, res in reals.items()),
        ]
    )
    with atomic_path(table_path) as tmp:
        Path(tmp).write_text(table + "\n")
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale)
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
