"""The claims step of outcome_process (outcome_process_claims): measured metrics and every claim's verdict."""

from __future__ import annotations

from pathlib import Path

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, write_json

from .summary import claims_metrics

DECLARATION = Path(__file__).with_name("claims.yaml")


def write_paper_claims(
    rate_files: list[str],
    horizon_files: list[str],
    eps_files: list[str],
    samples_files: list[str],
    target: float,
    lemma_json: str,
    prm_json: str,
    preference_files: list[str],
    families: list[str],
    prm_families: list[str],
    scale: str,
    claims_path: str,
    summary_path: str,
) -> None:
    """Step outcome_process_claims: metrics_summary.json and claims.json (with metrics.json beside it)."""
    measured = claims_metrics(
        rate_files, horizon_files, eps_files, samples_files, target, lemma_json, prm_json, preference_files
    )
    write_json(summary_path, measured)
    doc = evaluate_claims(
        load_declaration(DECLARATION), measured, scale, expand_over={"family": families, "prm_family": prm_families}
    )
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
