"""The decompilation check and the lattice enumeration: step dpa_logic_semantics (`semantics_experiment`)."""

from __future__ import annotations

import numpy as np
import torch

from methods.common.io import log, write_json

from . import logic
from .losses import LOSSES, STRUCTURES, closed_form, compiled_loss, random_batch

NAMED_N2 = ["sft", "unlikelihood", "cpo", "cpo_strict", "orpo", "orpo_strict", "orpo_lenient"]


def decompile_check(n_points: int, seed: int) -> dict:
    """Compiled semantic loss vs closed form for every loss with a structure, on random log-probs."""
    batch = random_batch(n_points, seed)
    rows = {}
    for name, spec in LOSSES.items():
        row = {"family": spec.family, "hparams": spec.hparams}
        if spec.family == "no_structure":
            row["reason"] = spec.reason
            row.update(_no_structure_witness(name, batch))
        else:
            compiled, closed = compiled_loss(name, batch), closed_form(name, batch)
            err = (compiled - closed).abs()
            row["max_abs_err"] = float(err.max())
            row["max_rel_err"] = float((err / closed.abs().clamp(min=1e-300)).max())
            row["terms"] = [
                {
                    "structure": t.structure,
                    "weight_map": t.weight_map,
                    "reference": t.reference,
                    "beta": t.beta_key,
                    "coef": t.coef_key,
                }
                for t in spec.terms
            ]
        rows[name] = row
    return rows


def _no_structure_witness(name: str, batch: dict) -> dict:
    """Numbers behind the reason a loss has no exact structure (its margin is a structure's rho)."""
    hp = LOSSES[name].hparams
    rho = torch.linspace(-5, 25, 3001, dtype=torch.float64)
    if name == "ipo":
        target = 1.0 / (2.0 * hp["tau"])
        values = (rho - target) ** 2
        # its margin is exactly the DPO structure's rho at beta = 1 (ratio reference)
        from .losses import compiled_margin

        h = (batch["logp_w"] - batch["ref_w"]) - (batch["logp_l"] - batch["ref_l"])
        margin_err = float((compiled_margin("cpo", batch, {"beta": 1.0}) - h).abs().max())
    else:
        values = torch.clamp(hp["delta"] - rho, min=0.0)
        from .logic import margin
        from .losses import Term, proposition_log_probs

        lp = proposition_log_probs(Term("cpo", beta_key=None), batch, hp)
        margin_err = float((margin(STRUCTURES["cpo"], lp) - (batch["logp_w"] - batch["logp_l"])).abs().max())
    increasing = bool(torch.any(values[1:] > values[:-1] + 1e-12))
    zero_at_finite = bool(torch.any(values == 0))
    return {
        "margin_structure": LOSSES[name].margin_structure,
        "margin_max_abs_err": margin_err,
        "increases_somewhere_in_rho": increasing,
        "zero_at_finite_rho": zero_at_finite,
    }


def lattice_report(max_n: int, n_points: int, seed: int) -> dict:
    """Size of the landscape, the entailment order's properties and its agreement with the loss values."""
    out = {"sizes": {}}
    for n in range(1, max_n + 1):
        out["sizes"][str(n)] = {
            "structures": logic.structure_count(n),
            "compile_image": logic.compile_image_size(n),
            "distinct_loss_functions": logic.distinct_loss_functions(n, seed=seed),
        }
    names = ("w", "l")
    structures = logic.all_structures(names)
    n_masks = np.array([s.n_mask for s in structures])
    d_masks = np.array([s.d_mask for s in structures])
    rel = logic.entailment_matrix(n_masks, d_masks)
    out["order_n2"] = logic.is_partial_order(rel)
    out["order_n2"]["comparable_pairs"] = int(rel.sum() - len(rel))
    # entailment => pointwise loss order, at random points in the open unit square
    rng = np.random.default_rng(seed)
    log_p = np.log(rng.uniform(0.01, 0.99, size=(n_points, 2)))
    table = logic.log_wmc_table(2, log_p)
    with np.errstate(invalid="ignore"):
        rho = table[n_masks] - table[d_masks]  # (S, M)
    rho = np.where(np.isnan(rho), -np.inf, rho)
    loss = np.logaddexp(0.0, -rho)
    i, j = np.nonzero(rel & ~np.eye(len(rel), dtype=bool))
    finite = np.isfinite(loss[i]) & np.isfinite(loss[j])
    both_inf = np.isinf(loss[i]) & np.isinf(loss[j])
    ok = (loss[i] >= loss[j] - 1e-12) | both_inf | (np.isinf(loss[i]) & ~np.isinf(loss[j]))
    out["order_n2"]["monotone_checks"] = int(ok.size)
    out["order_n2"]["monotone_violations"] = int((~ok).sum())
    out["order_n2"]["finite_checks"] = int(finite.sum())
    # the named structures: roles per world, canonical (P, P_C, P_A), order among them
    named = {}
    for k in NAMED_N2:
        s = STRUCTURES[k]
        p, c, a = s.decompile()
        named[k] = {
            "roles": s.roles(),
            "N": logic.formula_string(s.n_mask, names),
            "D": logic.formula_string(s.d_mask, names),
            "P": logic.formula_string(p, names),
            "P_C": logic.formula_string(c, names),
            "P_A": logic.formula_string(a, names),
        }
    out["named"] = named
    out["named_order"] = [
        [a, b] for a in NAMED_N2 for b in NAMED_N2 if a != b and logic.entails(STRUCTURES[a], STRUCTURES[b])
    ]
    s = STRUCTURES["simpo"]
    out["simpo_structure"] = {"roles": s.roles(), "names": list(s.names)}
    return out


def semantics_experiment(n_points: int, seed: int, lattice_max_n: int, order_points: int, out_json: str) -> None:
    """Decompiled losses vs closed forms; lattice sizes; the entailment order and its monotonicity."""
    doc = {"decompile": decompile_check(n_points, seed), "lattice": lattice_report(lattice_max_n, order_points, seed)}
    for name, row in doc["decompile"].items():
        log(f"{name}: " + (f"max rel err {row['max_rel_err']:.2e}" if "max_rel_err" in row else row["reason"]))
    log(f"lattice sizes {doc['lattice']['sizes']}; order {doc['lattice']['order_n2']}")
    write_json(out_json, doc)
