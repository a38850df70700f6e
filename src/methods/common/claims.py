"""Claims: declare a paper's headline claims, compute their verdicts from measurements.

A paper declares its claims in `src/methods/<slug>/claims.yaml`:

    paper: timemcl
    title: "..."
    arxiv: "2506.05515"
    claims:
      - id: toy_beats_sampling
        statement: "WTA heads quantize better than K samples of a Gaussian model"
        paper_value: {value: "qualitative", source: "Section 5.1, Figure 2"}
        criterion: "toy_wta_distortion < toy_deepar_distortion"
        testable_if: "toy_wta_collapsed > 0"      # optional precondition
        refuted_if: "toy_wta_distortion > 1.1 * toy_deepar_distortion"   # optional, see below
        evidence: ["toy/metrics.json", "figures/toy_heads.png"]

A claim with `for_each: <name>` is a template: it is expanded once per value of the list the
claims step passes under that name (e.g. one claim per dataset of the current scale), with
`{<name>}` substituted in its id, statement, criterion, testable_if, evidence and note.

The paper's claims step measures a flat dict `{metric name: value or list over seeds}`
and calls `evaluate_claims`. The criterion is a small expression (comparisons,
arithmetic, `and`/`or`/`not`, `abs`/`min`/`max`/`mean`) over metric names. With
seeds it is evaluated seed by seed (scalars broadcast): true on every seed ->
`reproduced`, false on every seed -> `not_reproduced`, mixed, NaN or an unmet
`testable_if` -> `inconclusive`. Nobody writes a verdict by hand.

A claim whose measurement is noisy from run to run (wall-clock timings) states its noise band:
`criterion` is what reproduces it beyond the band and `refuted_if` what refutes it beyond the
band. Then `not_reproduced` needs `refuted_if` on every seed, and a value inside the band is a tie,
`inconclusive`, so the verdict cannot flip between reproduced and not_reproduced from noise smaller
than the band. The two expressions must never both hold.
"""
from __future__ import annotations

import ast
import math
import operator
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import yaml

from .io import read_json, write_json

VERDICTS = ("reproduced", "not_reproduced", "inconclusive")
SCHEMA_PATH = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "claims.schema.json"
DECLARATION_KEYS = {"id", "statement", "paper_value", "criterion", "refuted_if", "testable_if", "evidence", "note",
                    "for_each"}
_TEMPLATED = ("id", "statement", "criterion", "refuted_if", "testable_if", "note")

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_CMPOPS = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne,
}
_FUNCS = {"abs": abs, "min": min, "max": max, "mean": lambda *xs: sum(xs) / len(xs)}


def criterion_names(expr: str) -> list[str]:
    """Metric names an expression reads, in order of appearance, without duplicates."""
    tree = _parse(expr)
    names = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in _FUNCS]
    return list(dict.fromkeys(names))


def _parse(expr: str) -> ast.Expression:
    try:
        return ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise ValueError(f"criterion {expr!r} is not a valid expression: {e.msg}") from e


def evaluate_expression(expr: str, values: Mapping[str, float]) -> Any:
    """Evaluate a criterion on scalar values; only the whitelisted syntax is accepted."""

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool)):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in values:
                raise KeyError(f"criterion {expr!r} reads metric {node.id!r}, which was not measured; "
                               f"measured: {sorted(values)}")
            return values[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not ev(node.operand)
        if isinstance(node, ast.BoolOp):
            parts = [ev(v) for v in node.values]
            return all(parts) if isinstance(node.op, ast.And) else any(parts)
        if isinstance(node, ast.Compare):
            left = ev(node.left)
            for op, comp in zip(node.ops, node.comparators):
                if type(op) not in _CMPOPS:
                    break
                right = ev(comp)
                if not _CMPOPS[type(op)](left, right):
                    return False
                left = right
            else:
                return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS and not node.keywords:
            return _FUNCS[node.func.id](*[ev(a) for a in node.args])
        raise ValueError(f"criterion {expr!r}: unsupported syntax {ast.dump(node)[:60]}; "
                         f"use comparisons, + - * /, and/or/not, {sorted(_FUNCS)}")

    return ev(_parse(expr))


def _as_list(value) -> list[float]:
    if isinstance(value, (list, tuple, np.ndarray)):
        return [float(v) for v in value]
    return [float(value)]


def _n_seeds(measured: Mapping[str, Sequence[float]], names: list[str], claim_id: str) -> int:
    lengths = {len(measured[n]) for n in names if len(measured[n]) > 1}
    if len(lengths) > 1:
        raise ValueError(f"claim {claim_id!r}: metrics {names} have different numbers of seeds {sorted(lengths)}")
    return lengths.pop() if lengths else 1


def _per_seed(expr: str, measured: Mapping[str, list[float]], n: int) -> list[bool | None]:
    """The criterion's truth on each seed; None where a value it reads is NaN."""
    names = criterion_names(expr)
    outcomes = []
    for i in range(n):
        values = {k: measured[k][i if len(measured[k]) > 1 else 0] for k in names}
        if any(math.isnan(v) for v in values.values()):
            outcomes.append(None)
        else:
            outcomes.append(bool(evaluate_expression(expr, values)))
    return outcomes


def verdict_from_outcomes(outcomes: Sequence[bool | None], refuted: Sequence[bool | None] | None = None) -> str:
    """All true -> reproduced; refuted on every seed (by default: the criterion false on every seed)
    -> not_reproduced; anything else (mixed seeds, NaN, a value inside a noise band) -> inconclusive."""
    if not outcomes or any(o is None for o in outcomes):
        return "inconclusive"
    if all(outcomes):
        return "reproduced"
    if refuted is None:
        refuted = [not o for o in outcomes]
    if all(r is True for r in refuted):
        return "not_reproduced"
    return "inconclusive"


def _summary(values: list[float]) -> dict:
    """Values per seed, mean and sample std; NaN (a failed measurement) stays visible as null."""
    arr = np.asarray(values, dtype=float)
    std = float(np.std(arr, ddof=1)) if len(arr) > 1 else 0.0
    finite = lambda x: x if math.isfinite(x) else None  # noqa: E731
    return {"values": [finite(float(v)) for v in arr], "mean": finite(float(np.mean(arr))), "std": finite(std)}


def evaluate_claim(decl: Mapping, measured: Mapping[str, Any], scale: str) -> dict:
    """One claim's row of claims.json: declaration + measured values + computed verdict."""
    unknown = set(decl) - DECLARATION_KEYS
    if unknown:
        raise ValueError(f"claim {decl.get('id')!r}: unknown keys {sorted(unknown)}; allowed {sorted(DECLARATION_KEYS)}")
    measured = {k: _as_list(v) for k, v in measured.items()}
    names = criterion_names(decl["criterion"])
    for extra in ("refuted_if", "testable_if"):
        if decl.get(extra):
            names += [n for n in criterion_names(decl[extra]) if n not in names]
    missing = [n for n in names if n not in measured]
    if missing:
        raise KeyError(f"claim {decl['id']!r} reads metrics {missing}, which were not measured; measured: {sorted(measured)}")
    n = _n_seeds(measured, names, decl["id"])
    outcomes = _per_seed(decl["criterion"], measured, n)
    refuted = _per_seed(decl["refuted_if"], measured, n) if decl.get("refuted_if") else None
    if refuted is not None and any(o and r for o, r in zip(outcomes, refuted)):
        raise ValueError(f"claim {decl['id']!r}: criterion and refuted_if both hold on one seed; "
                         f"they must exclude each other ({decl['criterion']!r} / {decl['refuted_if']!r})")
    verdict = verdict_from_outcomes(outcomes, refuted)
    testable = True
    if decl.get("testable_if"):
        testable = all(o is True for o in _per_seed(decl["testable_if"], measured, n))
        if not testable:
            verdict = "inconclusive"
    row = {
        "id": decl["id"],
        "statement": decl["statement"],
        "paper_value": dict(decl["paper_value"]),
        "measured": {k: _summary(measured[k]) for k in names},
        "criterion": decl["criterion"],
        "per_seed": outcomes,
        "verdict": verdict,
        "scale": scale,
        "evidence": list(decl.get("evidence", [])),
    }
    if refuted is not None:
        row["refuted_if"] = decl["refuted_if"]
        row["per_seed_refuted"] = refuted
    if decl.get("testable_if"):
        row["testable_if"] = decl["testable_if"]
        row["testable"] = testable
    if decl.get("note"):
        row["note"] = decl["note"]
    return row


def load_declaration(path: str | Path) -> dict:
    """Read and check a paper's claims.yaml."""
    path = Path(path)
    doc = yaml.safe_load(path.read_text())
    for key in ("paper", "title", "arxiv", "claims"):
        if key not in doc:
            raise ValueError(f"{path}: missing top-level key {key!r}")
    ids = [c.get("id") for c in doc["claims"]]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        raise ValueError(f"{path}: duplicate claim ids {sorted(dupes)}")
    for c in doc["claims"]:
        for key in ("id", "statement", "paper_value", "criterion"):
            if key not in c:
                raise ValueError(f"{path}: claim {c.get('id')!r} lacks {key!r}")
        unknown = set(c) - DECLARATION_KEYS
        if unknown:
            raise ValueError(f"{path}: claim {c['id']!r} has unknown keys {sorted(unknown)}; allowed {sorted(DECLARATION_KEYS)}")
        if c.get("for_each"):
            placeholder = "{" + c["for_each"] + "}"
            if placeholder not in c["id"]:
                raise ValueError(f"{path}: claim {c['id']!r} has for_each but its id lacks {placeholder}")
        else:
            for key in ("criterion", "refuted_if", "testable_if"):
                if c.get(key):
                    criterion_names(c[key])  # a syntax error surfaces here, naming the expression
    return doc


def expand_claims(claims: Sequence[Mapping], expand_over: Mapping[str, Sequence[str]]) -> list[dict]:
    """Expand `for_each` templates into one claim per value (see the module docstring)."""
    out = []
    for c in claims:
        name = c.get("for_each")
        if name is None:
            out.append(dict(c))
            continue
        if name not in expand_over:
            raise KeyError(f"claim {c['id']!r} has for_each: {name!r}, but the claims step passed only {sorted(expand_over)}")
        for value in expand_over[name]:
            e = {k: v for k, v in c.items() if k != "for_each"}
            for key in _TEMPLATED:
                if key in e:
                    e[key] = str(e[key]).replace("{" + name + "}", str(value))
            e["evidence"] = [str(p).replace("{" + name + "}", str(value)) for p in e.get("evidence", [])]
            out.append(e)
    return out


def evaluate_claims(declaration: Mapping, measured: Mapping[str, Any], scale: str,
                    expand_over: Mapping[str, Sequence[str]] | None = None, extra: Mapping | None = None) -> dict:
    """The whole claims.json document for one paper."""
    claims = expand_claims(declaration["claims"], expand_over or {})
    doc = {
        "paper": declaration["paper"],
        "title": declaration["title"],
        "arxiv": str(declaration["arxiv"]),
        "scale": scale,
        "claims": [evaluate_claim(c, measured, scale) for c in claims],
    }
    if extra:
        doc.update(extra)
    return doc


def validate_claims(doc: Mapping, schema_path: str | Path = SCHEMA_PATH) -> None:
    """Raise jsonschema.ValidationError (naming the failing path) unless `doc` fits the schema."""
    import jsonschema

    jsonschema.validate(doc, read_json(schema_path))


def write_claims(path: str | Path, doc: Mapping) -> None:
    """Validate, then write atomically: an invalid document never reaches disk."""
    validate_claims(doc)
    write_json(path, doc)


def format_value(summary: Mapping) -> str:
    """'0.123 ± 0.004 (n=3)' or '0.123'."""
    mean, std, n = summary["mean"], summary["std"], len(summary["values"])
    if mean is None:
        return "NaN"
    return f"{mean:.4g} ± {std or 0:.2g} (n={n})" if n > 1 else f"{mean:.4g}"


def claims_table_markdown(doc: Mapping) -> str:
    """The paper's claims as a markdown table."""
    lines = [
        "| claim | paper | measured | criterion | verdict |",
        "|---|---|---|---|---|",
    ]
    for c in doc["claims"]:
        paper = f"{c['paper_value']['value']} ({c['paper_value']['source']})"
        measured = "<br>".join(f"`{k}` = {format_value(v)}" for k, v in c["measured"].items())
        criterion = f"`{c['criterion']}`" + (f"; refuted if `{c['refuted_if']}`" if c.get("refuted_if") else "")
        lines.append(f"| **{c['id']}**: {c['statement']} | {paper} | {measured} | {criterion} | **{c['verdict']}** |")
    return "\n".join(lines)
