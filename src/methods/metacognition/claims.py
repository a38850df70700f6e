"""The claims step of metacognition (metacognition_claims): the learner's measured outcomes and the verdicts."""

from __future__ import annotations

from pathlib import Path

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import write_json

from .summary import claims_metrics, merge_seed_groups

DECLARATION = Path(__file__).with_name("claims.yaml")


def write_paper_claims(test_files: list[str], scale: str, claims_path: str, summary_path: str) -> None:
    """Step metacognition_claims: metrics_summary.json and claims.json (with metrics.json beside it)."""
    m = claims_metrics(merge_seed_groups(test_files))
    write_json(summary_path, m)
    write_claims(claims_path, evaluate_claims(load_declaration(DECLARATION), m, scale))
