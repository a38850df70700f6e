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

Every claim has a `kind`:

- `headline`: a statement of the paper itself (abstract, a table, a figure, a theorem), with its
  source in `paper_value.source`. It also declares its `setting` (`paper`: the paper's own model,
  data and protocol; `reduced`: its protocol and data, smaller; `stand-in`: other data or another
  model) and its `null`: a mapping `{metric: replacement}` that puts a measured number without the
  paper's effect (the baseline's number in place of the method's, the untrained or ablated model in
  place of the trained one) in place of a metric the criterion reads, e.g.
  `null: {f1_sae: f1_best_baseline}`. The criterion is evaluated again under that substitution
  (`null_per_seed`, `null_verdict`: the verdict the claim would read with the null's numbers, its
  `testable_if` premise included); a criterion that the null also satisfies cannot tell the effect
  from its absence, so its verdict is `inconclusive`, never `reproduced`. A claim whose test has
  power against its null only in some runs (the null may or may not degrade at a given scale) states
  that power as a premise on the null's metrics, so that it reads `inconclusive` where the null is
  not seen to fail; a claim that no measured null can fail (a lower bound holds for every learner,
  trained or not) is a check.
- `check`: the project's own test of its implementation, of a premise, or of a property true by
  construction. Its verdict reads `passed` / `failed` / `inconclusive`; tables list checks apart and
  never count them as reproductions.

`testable_if` states a premise: when it does not hold on every seed, the claim is `inconclusive`
whatever its criterion says.
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
from .provenance import provenance

VERDICTS = ("reproduced", "not_reproduced", "inconclusive")
CHECK_VERDICTS = {"reproduced": "passed", "not_reproduced": "failed", "inconclusive": "inconclusive"}
KINDS = ("headline", "check")
SETTINGS = ("paper", "reduced", "stand-in")
SCHEMA_PATH = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "claims.schema.json"
DECLARATION_KEYS = {
    "id",
    "kind",
    "setting",
    "null",
    "statement",
    "paper_value",
    "criterion",
    "refuted_if",
    "testable_if",
    "evidence",
    "note",
    "for_each",
}
_TEMPLATED = ("id", "statement", "criterion", "refuted_if", "testable_if", "note")
# claims.yaml's optional `main_figure`: the data file behind the paper's main figure, for `dvc plots show`
MAIN_FIGURE_KEYS = {"data", "x", "y", "title", "template", "x_label", "y_label"}

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_CMPOPS = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
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
                raise KeyError(
                    f"criterion {expr!r} reads metric {node.id!r}, which was not measured; measured: {sorted(values)}"
                )
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
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCS
            and not node.keywords
        ):
            return _FUNCS[node.func.id](*[ev(a) for a in node.args])
        raise ValueError(
            f"criterion {expr!r}: unsupported syntax {ast.dump(node)[:60]}; "
            f"use comparisons, + - * /, and/or/not, {sorted(_FUNCS)}"
        )

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


def _substituted(measured: Mapping[str, list[float]], null: Mapping[str, str]) -> dict[str, list[float]]:
    """The measurements with each metric of `null` replaced by its null metric's values."""
    out = dict(measured)
    out.update({name: measured[replacement] for name, replacement in null.items()})
    return out


def check_declaration(decl: Mapping) -> None:
    """The claim-level rules of the contract (module docstring), naming the claim and the key."""
    cid = decl.get("id")
    unknown = set(decl) - DECLARATION_KEYS
    if unknown:
        raise ValueError(f"claim {cid!r}: unknown keys {sorted(unknown)}; allowed {sorted(DECLARATION_KEYS)}")
    for key in ("id", "statement", "criterion", "kind"):
        if key not in decl:
            raise ValueError(
                f"claim {cid!r} lacks {key!r}" + (f"; set kind: one of {list(KINDS)}" if key == "kind" else "")
            )
    kind = decl["kind"]
    if kind not in KINDS:
        raise ValueError(f"claim {cid!r}: kind {kind!r} is not one of {list(KINDS)}")
    if kind == "check":
        for key in ("setting", "null"):
            if key in decl:
                raise ValueError(f"claim {cid!r}: a check has no {key!r}; only headline claims do")
        return
    for key, fix in (
        ("paper_value", "{value: ..., source: 'abstract' / 'Table N' / ...}"),
        ("setting", f"one of {list(SETTINGS)}"),
        ("null", "{metric the criterion reads: measured metric without the paper's effect}"),
    ):
        if key not in decl:
            raise ValueError(f"claim {cid!r} (headline) lacks {key!r}: set it to {fix}, or make the claim a check")
    if decl["setting"] not in SETTINGS:
        raise ValueError(f"claim {cid!r}: setting {decl['setting']!r} is not one of {list(SETTINGS)}")
    null = decl["null"]
    if not isinstance(null, Mapping) or not null or not all(isinstance(v, str) for v in null.values()):
        raise ValueError(f"claim {cid!r}: null must be a non-empty mapping {{metric: null metric}}, got {null!r}")


def evaluate_claim(decl: Mapping, measured: Mapping[str, Any], scale: str) -> dict:
    """One claim's row of claims.json: declaration + measured values + computed verdict.

    A headline claim is evaluated a second time with its `null` substituted; when the criterion
    holds under the null too, the claim cannot tell the paper's effect from its absence and its
    verdict is `inconclusive`."""
    check_declaration(decl)
    measured = {k: _as_list(v) for k, v in measured.items()}
    names = criterion_names(decl["criterion"])
    for extra in ("refuted_if", "testable_if"):
        if decl.get(extra):
            names += [n for n in criterion_names(decl[extra]) if n not in names]
    null = dict(decl.get("null") or {})
    not_read = [k for k in null if k not in criterion_names(decl["criterion"])]
    if not_read:
        raise ValueError(
            f"claim {decl['id']!r}: null replaces {not_read}, which its criterion {decl['criterion']!r} does not read"
        )
    names += [n for n in null.values() if n not in names]
    missing = [n for n in names if n not in measured]
    if missing:
        raise KeyError(
            f"claim {decl['id']!r} reads metrics {missing}, which were not measured; measured: {sorted(measured)}"
        )
    n = _n_seeds(measured, names, decl["id"])
    outcomes = _per_seed(decl["criterion"], measured, n)
    refuted = _per_seed(decl["refuted_if"], measured, n) if decl.get("refuted_if") else None
    if refuted is not None and any(o and r for o, r in zip(outcomes, refuted)):
        raise ValueError(
            f"claim {decl['id']!r}: criterion and refuted_if both hold on one seed; "
            f"they must exclude each other ({decl['criterion']!r} / {decl['refuted_if']!r})"
        )
    verdict = verdict_from_outcomes(outcomes, refuted)
    testable = True
    if decl.get("testable_if"):
        testable = all(o is True for o in _per_seed(decl["testable_if"], measured, n))
        if not testable:
            verdict = "inconclusive"
    row = {
        "id": decl["id"],
        "kind": decl["kind"],
        "statement": decl["statement"],
        "measured": {k: _summary(measured[k]) for k in names},
        "criterion": decl["criterion"],
        "per_seed": outcomes,
        "scale": scale,
        "evidence": list(decl.get("evidence", [])),
    }
    if decl.get("paper_value") is not None:
        row["paper_value"] = dict(decl["paper_value"])
    if null:
        under_null = _substituted(measured, null)
        null_outcomes = _per_seed(decl["criterion"], under_null, n)
        null_refuted = _per_seed(decl["refuted_if"], under_null, n) if decl.get("refuted_if") else None
        row["setting"] = decl["setting"]
        row["null"] = null
        row["null_per_seed"] = null_outcomes
        row["null_verdict"] = verdict_from_outcomes(null_outcomes, null_refuted)
        # the whole claim under the null: an unmet premise makes the null's verdict inconclusive too
        if decl.get("testable_if") and not all(o is True for o in _per_seed(decl["testable_if"], under_null, n)):
            row["null_verdict"] = "inconclusive"
        if row["null_verdict"] == "reproduced" and verdict == "reproduced":
            verdict = "inconclusive"
    if refuted is not None:
        row["refuted_if"] = decl["refuted_if"]
        row["per_seed_refuted"] = refuted
    if decl.get("testable_if"):
        row["testable_if"] = decl["testable_if"]
        row["testable"] = testable
    if decl.get("note"):
        row["note"] = decl["note"]
    row["verdict"] = CHECK_VERDICTS[verdict] if decl["kind"] == "check" else verdict
    return row


def recompute_claim(row: Mapping) -> dict:
    """Evaluate a claims.json row again from its own recorded values: the declaration it carries and the
    measured values per seed (null, i.e. NaN, stays NaN). Equal verdicts show they were computed, not written."""
    decl = {k: v for k, v in row.items() if k in DECLARATION_KEYS}
    measured = {k: [math.nan if v is None else v for v in m["values"]] for k, m in row["measured"].items()}
    return evaluate_claim(decl, measured, row["scale"])


def load_declaration(path: str | Path) -> dict:
    """Read and check a paper's claims.yaml."""
    path = Path(path)
    doc = yaml.safe_load(path.read_text())
    for key in ("paper", "title", "arxiv", "claims"):
        if key not in doc:
            raise ValueError(f"{path}: missing top-level key {key!r}")
    unknown = set(doc) - {"paper", "title", "arxiv", "claims", "libraries", "main_figure"}
    if unknown:
        raise ValueError(
            f"{path}: unknown top-level keys {sorted(unknown)}; allowed: paper, title, arxiv, "
            f"libraries (the paper's key packages, recorded in the provenance), main_figure "
            f"(its data file for `dvc plots`), claims"
        )
    figure = doc.get("main_figure")
    if figure is not None:
        missing = {"data", "x", "y"} - set(figure) if isinstance(figure, dict) else {"data", "x", "y"}
        if missing or set(figure) - MAIN_FIGURE_KEYS:
            raise ValueError(
                f"{path}: main_figure must be a mapping with keys data (a CSV or JSON file under the "
                f"paper's results folder), x, y and optionally {sorted(MAIN_FIGURE_KEYS - {'data', 'x', 'y'})}; "
                f"got {figure!r}"
            )
    ids = [c.get("id") for c in doc["claims"]]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        raise ValueError(f"{path}: duplicate claim ids {sorted(dupes)}")
    for c in doc["claims"]:
        if None in c:  # YAML reads a bare `null:` key as None; the contract's key is the string "null"
            c["null"] = c.pop(None)
        try:
            check_declaration(c)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
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
            raise KeyError(
                f"claim {c['id']!r} has for_each: {name!r}, but the claims step passed only {sorted(expand_over)}"
            )
        for value in expand_over[name]:
            e = {k: v for k, v in c.items() if k != "for_each"}
            for key in _TEMPLATED:
                if key in e:
                    e[key] = str(e[key]).replace("{" + name + "}", str(value))
            e["evidence"] = [str(p).replace("{" + name + "}", str(value)) for p in e.get("evidence", [])]
            if "null" in e:
                sub = lambda t: str(t).replace("{" + name + "}", str(value))  # noqa: E731
                e["null"] = {sub(k): sub(v) for k, v in e["null"].items()}
            out.append(e)
    return out


def evaluate_claims(
    declaration: Mapping,
    measured: Mapping[str, Any],
    scale: str,
    expand_over: Mapping[str, Sequence[str]] | None = None,
    extra: Mapping | None = None,
) -> dict:
    """The whole claims.json document for one paper."""
    claims = expand_claims(declaration["claims"], expand_over or {})
    doc = {
        "paper": declaration["paper"],
        "title": declaration["title"],
        "arxiv": str(declaration["arxiv"]),
        "scale": scale,
        "claims": [evaluate_claim(c, measured, scale) for c in claims],
        "provenance": provenance(declaration["paper"], scale, declaration.get("libraries", ())),
    }
    if extra:
        doc.update(extra)
    return doc


def validate_claims(doc: Mapping, schema_path: str | Path = SCHEMA_PATH) -> None:
    """Raise jsonschema.ValidationError (naming the failing path) unless `doc` fits the schema."""
    import jsonschema

    jsonschema.validate(doc, read_json(schema_path))


def headline_metrics(doc: Mapping) -> dict:
    """metrics.json of a paper, for `dvc metrics show/diff`: verdict counts of its headline claims and checks,
    then every metric its headline claims read (nulls included) as a mean and one key per seed
    (`per_seed_0`, `per_seed_1`, ... in the order of the paper's seeds). Scalars only."""
    out: dict = {
        "headline": {"reproduced": 0, "not_reproduced": 0, "inconclusive": 0},
        "checks": {"passed": 0, "failed": 0, "inconclusive": 0},
    }
    for c in doc["claims"]:
        out["headline" if c["kind"] == "headline" else "checks"][c["verdict"]] += 1
        if c["kind"] != "headline":
            continue
        for name, m in c["measured"].items():
            entry = {"mean": m["mean"]}
            if len(m["values"]) > 1:
                entry.update({f"per_seed_{i}": v for i, v in enumerate(m["values"])})
            out[name] = entry
    return out


def write_claims(path: str | Path, doc: Mapping) -> None:
    """Validate, then write claims.json and, beside it, metrics.json (`headline_metrics`), atomically: an invalid
    document never reaches disk."""
    validate_claims(doc)
    write_json(Path(path).with_name("metrics.json"), headline_metrics(doc))
    write_json(path, doc)


def format_value(summary: Mapping) -> str:
    """'0.123 ± 0.004 (n=3)' or '0.123'."""
    mean, std, n = summary["mean"], summary["std"], len(summary["values"])
    if mean is None:
        return "NaN"
    return f"{mean:.4g} ± {std or 0:.2g} (n={n})" if n > 1 else f"{mean:.4g}"


def _measured_cell(c: Mapping) -> str:
    return "<br>".join(f"`{k}` = {format_value(v)}" for k, v in c["measured"].items())


def _criterion_cell(c: Mapping) -> str:
    cell = f"`{c['criterion']}`" + (f"; refuted if `{c['refuted_if']}`" if c.get("refuted_if") else "")
    if c.get("testable_if"):
        cell += f"; testable if `{c['testable_if']}`" + ("" if c.get("testable") else " (**premise failed**)")
    return cell


def claims_table_markdown(doc: Mapping) -> str:
    """The paper's headline claims as a markdown table, then its checks as a second one."""
    headline = [c for c in doc["claims"] if c["kind"] == "headline"]
    checks = [c for c in doc["claims"] if c["kind"] == "check"]
    lines = []
    if headline:
        lines += [
            "| claim | setting | paper | measured | criterion | null | verdict |",
            "|---|---|---|---|---|---|---|",
        ]
        for c in headline:
            paper = f"{c['paper_value']['value']} ({c['paper_value']['source']})"
            null = ", ".join(f"`{k}` → `{v}`" for k, v in c["null"].items()) + f": {c['null_verdict']}"
            lines.append(
                f"| **{c['id']}**: {c['statement']} | {c['setting']} | {paper} | {_measured_cell(c)} "
                f"| {_criterion_cell(c)} | {null} | **{c['verdict']}** ({c['setting']}) |"
            )
    if checks:
        lines += [
            "",
            "Checks (the project's own tests of its implementation and premises; not counted as reproductions):",
            "",
            "| check | measured | criterion | result |",
            "|---|---|---|---|",
        ]
        for c in checks:
            lines.append(
                f"| **{c['id']}**: {c['statement']} | {_measured_cell(c)} | {_criterion_cell(c)} | **{c['verdict']}** |"
            )
    return "\n".join(lines).strip("\n")
