"""The claims step of human_data (human_data_claims): the model's measured outcomes and every claim's verdict."""

from __future__ import annotations

from pathlib import Path

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import write_json

from .summary import claims_metrics, merge_seed_groups

DECLARATION = Path(__file__).with_name("claims.yaml")


def write_paper_claims(
    simulation_files: list[str], reference: dict, scale: str, claims_path: str, summary_path: str
) -> None:
    """Step human_data_claims: metrics_summary.json and claims.json (with metrics.json beside it)."""
    doc = merge_seed_groups(simulation_files)
    m = claims_metrics(doc, reference)
    write_json(summary_path, m)
    write_claims(claims_path, evaluate_claims(load_declaration(DECLARATION), m, scale))
