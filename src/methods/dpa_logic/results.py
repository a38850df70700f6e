"""Step dpa_logic_claims: the measured metrics of the semantics and tabular steps and the verdicts of
claims.yaml (with the lists its templates expand over)."""

from __future__ import annotations

from pathlib import Path

from methods.common.claims import evaluate_claims, load_declaration, write_claims
from methods.common.io import log, read_json, write_json

from .losses import both_false_excluded

DECLARATION = Path(__file__).with_name("claims.yaml")
# Each derived loss and the known loss it was derived from (one world moved in the lattice).
DERIVED_PARENT = {"dpo_strict": "dpo", "orpo_strict": "orpo_or", "orpo_lenient": "orpo_or"}


def claims_metrics(semantics_json: str, tabular_files: dict) -> tuple[dict, dict]:
    """Flat metrics for claims.yaml, and the lists its templates expand over. The semantics numbers
    (decompilation errors, lattice sizes, the order) are identities tested in pytest; they are kept here
    for metrics_summary.json."""
    sem = read_json(semantics_json)
    m = {}
    structured = [k for k, v in sem["decompile"].items() if v["family"] != "no_structure"]
    for k in structured:
        m[f"decompile_rel_err_{k}"] = sem["decompile"][k]["max_rel_err"]
    for k in ("ipo", "slic"):
        row = sem["decompile"][k]
        m[f"{k}_margin_err"] = row["margin_max_abs_err"]
        m[f"{k}_increases_in_rho"] = float(row["increases_somewhere_in_rho"])
        m[f"{k}_zero_at_finite_rho"] = float(row["zero_at_finite_rho"])
    lat = sem["lattice"]
    for n, s in lat["sizes"].items():
        m[f"lattice_structures_n{n}"] = s["structures"]
        m[f"lattice_compile_image_n{n}"] = s["compile_image"]
        m[f"lattice_distinct_losses_n{n}"] = s["distinct_loss_functions"]
    order = lat["order_n2"]
    m["order_is_partial_order"] = float(order["reflexive"] and order["antisymmetric"] and order["transitive"])
    m["order_monotone_violations"] = order["monotone_violations"]
    m["order_comparable_pairs"] = order["comparable_pairs"]
    expand = {
        "structured_loss": structured,
        "allowing": [],
        "excluding": [],
        "derived": [],
        "derived_strict": [],
        "derived_lenient": [],
        "policy": [],
    }
    for policy, files in tabular_files.items():
        expand["policy"].append(policy)
        runs = [read_json(f) for f in files]
        losses = list(runs[0]["losses"])
        for name in losses:
            m[f"dlogp_w_{policy}_{name}"] = [r["losses"][name]["delta_logp_w"] for r in runs]
            m[f"acc_{policy}_{name}"] = [r["losses"][name]["test_accuracy"] for r in runs]
            group = "excluding" if runs[0]["losses"][name]["excludes_both_false"] else "allowing"
            key = f"{policy}_{name}"
            if key not in expand[group]:
                expand[group].append(key)
        m[f"acc_{policy}_reference"] = [r["ref_test_accuracy"] for r in runs]
        m[f"acc_{policy}_random"] = [r["random_test_accuracy"] for r in runs]
        for child, parent in DERIVED_PARENT.items():
            if child in losses and parent in losses:
                key = f"{policy}_{child}"
                expand["derived"].append(key)
                expand["derived_strict" if both_false_excluded(child) else "derived_lenient"].append(key)
                m[f"dlogp_w_parent_{key}"] = m[f"dlogp_w_{policy}_{parent}"]
                m[f"acc_parent_{key}"] = m[f"acc_{policy}_{parent}"]
                m[f"acc_reference_{key}"] = m[f"acc_{policy}_reference"]
                m[f"acc_random_{key}"] = m[f"acc_{policy}_random"]
        excl = [n for n in losses if runs[0]["losses"][n]["excludes_both_false"]]
        allow = [n for n in losses if n not in excl]
        m[f"min_dlogp_w_excluding_{policy}"] = [min(r["losses"][n]["delta_logp_w"] for n in excl) for r in runs]
        m[f"max_dlogp_w_allowing_{policy}"] = [max(r["losses"][n]["delta_logp_w"] for n in allow) for r in runs]
    return m, expand


def write_paper_claims(
    semantics_json: str, tabular_files: dict, scale: str, claims_path: str, summary_path: str
) -> None:
    measured, expand = claims_metrics(semantics_json, tabular_files)
    write_json(summary_path, {"metrics": measured, "groups": expand})
    doc = evaluate_claims(load_declaration(DECLARATION), measured, scale, expand_over=expand)
    write_claims(claims_path, doc)
    for c in doc["claims"]:
        log(f"{c['id']}: {c['verdict']}  " + ", ".join(f"{k}={v['mean']}" for k, v in c["measured"].items()))
