"""The claims step of principal_agent (principal_agent_claims): every claim's verdict from summary.json."""

from __future__ import annotations

from pathlib import Path

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, read_json, write_json

from .summary import AGNOSTIC

DECLARATION = Path(__file__).with_name("claims.yaml")


def _nan_for_null(value):
    """JSON has no NaN: a failed measurement was written as null; the claims read it back as NaN (inconclusive)."""
    if isinstance(value, list):
        return [float("nan") if v is None else v for v in value]
    return float("nan") if value is None else value


def write_paper_claims(
    summary_json: str,
    scale: str,
    adversaries: list[str],
    lb_algorithms: list[str],
    two_point_algorithms: list[str],
    claims_path: str,
    summary_path: str,
) -> None:
    """claims.json: every claim's verdict computed from the summary's metrics by its criterion; the flat metrics
    also as metrics_summary.json, as every paper writes them."""
    measured = read_json(summary_json)["metrics"]
    write_json(summary_path, measured)
    metrics = {k: _nan_for_null(v) for k, v in measured.items()}
    doc = evaluate_claims(
        load_declaration(DECLARATION),
        metrics,
        scale,
        expand_over={
            "adversary": adversaries,
            "lb_algorithm": [a for a in lb_algorithms if a in AGNOSTIC],
            "tp_algorithm": list(two_point_algorithms),
        },
    )
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}")
