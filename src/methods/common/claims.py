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
  source in `paper_value.source`. It declares its `setting` (`paper`: the paper's own model, data
  and protocol as the paper states them; `reduced`: its protocol and data, smaller; `stand-in`: other
  real data or another real pretrained model; `toy`: data generated here, or a model trained here from
  scratch where the paper uses a pretrained one) and its `nulls`: the measured alternatives without the
  paper's effect, each a substitution of measured metrics into the criterion:

      nulls:
        - {name: k1, kind: ablation, sub: {distortion_timemcl: distortion_k1}}    # the ingredient removed
        - {name: mean, kind: trivial, sub: {distortion_timemcl: distortion_mean}}  # no learning at all
        - {name: deepar, kind: baseline, sub: {...}, unequal_budget: "why"}       # optional budget note
      family: {distortion_timemcl: [distortion_k1, distortion_deepar, ...]}      # optional

  `kind` is `ablation` (the method with the paper's key ingredient removed, at the same budget),
  `trivial` (constant, majority or training-mean predictor, uniform scores, the untrained model, a
  policy that never acts, random play) or `baseline` (another method or ablation the run measures).
  `family` names, per metric, every metric of the run that measures the same quantity otherwise;
  each member not already a null becomes one (kind `family`). A null that puts a metric the
  criterion already reads in another's place ("A beats B" with B in A's place) fails by a tie
  whatever the data: it is allowed only as `kind: ablation`, when B is the method's own ablation.
- `check`: the project's own test of its implementation, of a premise, or of a property true by
  construction. Its verdict reads `passed` / `failed` / `inconclusive`; tables list checks apart and
  never count them as reproductions.

How a headline claim's verdict follows from its numbers:

1. The criterion on every seed: all true -> candidate `reproduced`; false (or refuted, with a noise
   band) on every seed -> `not_reproduced`; anything else -> `inconclusive`.
2. `testable_if`, a premise, holds back a reproduction (-> `inconclusive`) and nothing else: it never
   turns a refutation measured on the method into `inconclusive`. `valid_if` is different: a condition on
   how the numbers were measured (a timing claim's `compiled_kernels > 0`: the compiled kernels ran, not
   their PyTorch reference). Where it fails on a seed the numbers do not measure the method at all, so the
   claim reads `inconclusive` whatever its criterion says, a refutation included, with the reason.
3. Each null is evaluated with its substitution. The claim reads `reproduced` only if every null fails
   on every seed, no null has an `unequal_budget`, and the paired margin over the strongest null (the
   method's `slack` minus the null's, seed by seed: how far the criterion is from flipping) has a 95 %
   t interval over the seeds or data draws that excludes zero. One draw cannot show that: the claim
   reads `inconclusive` unless it declares `deterministic` (why its values carry no sampling noise).
   The row records each null's outcome and margin, the strongest null and the reason for the verdict.
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
from .provenance import provenance, with_job_records

VERDICTS = ("reproduced", "not_reproduced", "inconclusive")
CHECK_VERDICTS = {"reproduced": "passed", "not_reproduced": "failed", "inconclusive": "inconclusive"}
KINDS = ("headline", "check")
SETTINGS = ("paper", "reduced", "stand-in", "toy")
NULL_KINDS = ("ablation", "trivial", "baseline", "family")
NULL_KEYS = {"name", "kind", "sub", "unequal_budget"}
SCHEMA_VERSION = 2
SCHEMA_PATH = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "claims.schema.json"
DECLARATION_KEYS = {
    "id",
    "kind",
    "setting",
    "nulls",
    "family",
    "deterministic",
    "statement",
    "paper_value",
    "criterion",
    "refuted_if",
    "testable_if",
    "valid_if",
    "evidence",
    "note",
    "for_each",
}
_TEMPLATED = ("id", "statement", "criterion", "refuted_if", "testable_if", "valid_if", "note")
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
        if not all(math.isfinite(v) for v in values.values()):  # NaN or inf: a failed measurement
            outcomes.append(None)
            continue
        try:
            outcomes.append(bool(evaluate_expression(expr, values)))
        except ZeroDivisionError:  # a ratio over a measured zero is undefined on that seed
            outcomes.append(None)
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
    with np.errstate(invalid="ignore"):  # an infinite value gives a NaN spread, stored as null
        std = float(np.std(arr, ddof=1)) if len(arr) > 1 else 0.0
    finite = lambda x: x if math.isfinite(x) else None  # noqa: E731
    return {"values": [finite(float(v)) for v in arr], "mean": finite(float(np.mean(arr))), "std": finite(std)}


def _substituted(measured: Mapping[str, list[float]], sub: Mapping[str, str]) -> dict[str, list[float]]:
    """The measurements with each metric of `sub` replaced by its null metric's values."""
    out = dict(measured)
    out.update({name: measured[replacement] for name, replacement in sub.items()})
    return out


def slack(expr: str, values: Mapping[str, float]) -> float:
    """How far a criterion is from flipping, in the units of its metrics: > 0 where it holds with room to
    spare, < 0 where it fails. `a < b` gives b - a, `a > b` gives a - b, a chain its smallest step, `and` the
    smallest part, `or` the largest, `not` the negation; `a == b` gives -|a - b|. Comparing the slack of the
    method with the slack under a null, seed by seed, gives the paired margin of the claim over that null."""

    def value(node):
        return evaluate_expression(ast.unparse(node), values)

    def sl(node):
        if isinstance(node, ast.Expression):
            return sl(node.body)
        if isinstance(node, ast.BoolOp):
            parts = [sl(v) for v in node.values]
            return min(parts) if isinstance(node.op, ast.And) else max(parts)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return -sl(node.operand)
        if isinstance(node, ast.Compare):
            steps, left = [], value(node.left)
            for op, comp in zip(node.ops, node.comparators):
                right = value(comp)
                if isinstance(op, (ast.Lt, ast.LtE)):
                    steps.append(right - left)
                elif isinstance(op, (ast.Gt, ast.GtE)):
                    steps.append(left - right)
                elif isinstance(op, ast.Eq):
                    steps.append(-abs(left - right))
                else:
                    steps.append(abs(left - right))
                left = right
            return float(min(steps))
        return 1.0 if value(node) else -1.0

    return float(sl(_parse(expr)))


def _t_quantile(n: int) -> float:
    """Two-sided 95 % Student-t quantile with n - 1 degrees of freedom."""
    from scipy import stats

    return float(stats.t.ppf(0.975, n - 1))


def paired_interval(diffs: Sequence[float]) -> dict:
    """Mean and two-sided 95 % t interval of paired differences (one per seed or data draw); with one value the
    interval is that value (no spread can be estimated)."""
    d = np.asarray(diffs, dtype=float)
    mean = float(np.mean(d))
    if len(d) < 2:
        return {"mean": mean, "low": mean, "high": mean, "n": len(d)}
    half = _t_quantile(len(d)) * float(np.std(d, ddof=1)) / math.sqrt(len(d))
    return {"mean": mean, "low": mean - half, "high": mean + half, "n": len(d)}


def _slacks(expr: str, measured: Mapping[str, list[float]], n: int) -> list[float | None]:
    names = criterion_names(expr)
    out = []
    for i in range(n):
        values = {k: measured[k][i if len(measured[k]) > 1 else 0] for k in names}
        try:
            s = slack(expr, values) if all(math.isfinite(v) for v in values.values()) else None
        except ZeroDivisionError:
            s = None
        out.append(s if s is None or math.isfinite(s) else None)
    return out


def is_self_tie(sub: Mapping[str, str], criterion: str) -> bool:
    """A substitution that puts a metric the criterion already reads in another's place: "A beats B" with B in
    A's place, which fails by a tie whatever the data."""
    read = set(criterion_names(criterion))
    return any(replacement in read for replacement in sub.values())


def declared_nulls(decl: Mapping) -> list[dict]:
    """The claim's nulls: its `nulls` list, then one null per member of its `family` not already there
    (kind `family`; a member that the criterion already reads is the claim's comparator and is skipped)."""
    nulls = [dict(n) for n in decl.get("nulls") or []]
    have = {tuple(sorted(n["sub"].items())) for n in nulls}
    read = set(criterion_names(decl["criterion"]))
    for metric, members in (decl.get("family") or {}).items():
        for member in members:
            key = ((metric, member),)
            if member in read or member == metric or key in have:
                continue
            nulls.append({"name": member, "kind": "family", "sub": {metric: member}})
            have.add(key)
    return nulls


def check_declaration(decl: Mapping) -> None:
    """The claim-level rules of the contract (module docstring), naming the claim and the key."""
    cid = decl.get("id")
    unknown = set(decl) - DECLARATION_KEYS
    if unknown:
        hint = "; `null` became `nulls`, a list of {name, kind, sub}" if "null" in unknown else ""
        raise ValueError(f"claim {cid!r}: unknown keys {sorted(unknown)}; allowed {sorted(DECLARATION_KEYS)}{hint}")
    for key in ("id", "statement", "criterion", "kind"):
        if key not in decl:
            raise ValueError(
                f"claim {cid!r} lacks {key!r}" + (f"; set kind: one of {list(KINDS)}" if key == "kind" else "")
            )
    kind = decl["kind"]
    if kind not in KINDS:
        raise ValueError(f"claim {cid!r}: kind {kind!r} is not one of {list(KINDS)}")
    if kind == "check":
        for key in ("setting", "nulls", "family", "deterministic"):
            if key in decl:
                raise ValueError(f"claim {cid!r}: a check has no {key!r}; only headline claims do")
        return
    for key, fix in (
        ("paper_value", "{value: ..., source: 'abstract' / 'Table N' / ...}"),
        ("setting", f"one of {list(SETTINGS)}"),
        ("nulls", "a list of {name, kind: ablation|trivial|baseline, sub: {metric the criterion reads: null metric}}"),
    ):
        if key not in decl:
            raise ValueError(f"claim {cid!r} (headline) lacks {key!r}: set it to {fix}, or make the claim a check")
    if decl["setting"] not in SETTINGS:
        raise ValueError(f"claim {cid!r}: setting {decl['setting']!r} is not one of {list(SETTINGS)}")
    nulls = decl["nulls"]
    if not isinstance(nulls, list) or not nulls:
        raise ValueError(f"claim {cid!r}: nulls must be a non-empty list of {{name, kind, sub}}, got {nulls!r}")
    names = [n.get("name") if isinstance(n, Mapping) else None for n in nulls]
    for n in nulls:
        if not isinstance(n, Mapping) or set(n) - NULL_KEYS or not {"name", "kind", "sub"} <= set(n):
            raise ValueError(
                f"claim {cid!r}: each null is a mapping with keys name, kind, sub (and optionally unequal_budget: "
                f"why the null cannot get the method's budget); got {n!r}"
            )
        if n["kind"] not in NULL_KINDS:
            raise ValueError(f"claim {cid!r}, null {n['name']!r}: kind {n['kind']!r} is not one of {list(NULL_KINDS)}")
        sub = n["sub"]
        if not isinstance(sub, Mapping) or not sub or not all(isinstance(v, str) for v in sub.values()):
            raise ValueError(f"claim {cid!r}, null {n['name']!r}: sub must map metric -> null metric, got {sub!r}")
        if "{" not in decl["criterion"] and is_self_tie(sub, decl["criterion"]) and n["kind"] != "ablation":
            raise ValueError(
                f"claim {cid!r}, null {n['name']!r}: {sub} puts a metric the criterion already reads in another's "
                f"place, which fails by a tie whatever the data; keep such a null only when the comparator is the "
                f"method with its own mechanism removed (kind: ablation), and name a null that can fail otherwise"
            )
    if len(set(names)) != len(names):
        raise ValueError(f"claim {cid!r}: null names must be unique, got {names}")
    family = decl.get("family")
    if family is not None and (
        not isinstance(family, Mapping)
        or not all(isinstance(v, list) and all(isinstance(m, str) for m in v) for v in family.values())
    ):
        raise ValueError(f"claim {cid!r}: family must map metric -> [metrics measuring it otherwise], got {family!r}")
    if "deterministic" in decl and not (isinstance(decl["deterministic"], str) and decl["deterministic"].strip()):
        raise ValueError(f"claim {cid!r}: deterministic must say why its values carry no sampling noise")


def _null_row(null: Mapping, decl: Mapping, measured: Mapping, n: int, method_slack: list) -> dict:
    """One null's evaluation: the criterion seed by seed under its substitution and the paired margin of the
    method over it (the method's slack minus the null's, seed by seed)."""
    under = _substituted(measured, null["sub"])
    outcomes = _per_seed(decl["criterion"], under, n)
    null_slack = _slacks(decl["criterion"], under, n)
    diffs = [m - s for m, s in zip(method_slack, null_slack) if m is not None and s is not None]
    row = {
        "name": null["name"],
        "kind": null["kind"],
        "sub": dict(null["sub"]),
        "self_tie": is_self_tie(null["sub"], decl["criterion"]),
        "per_seed": outcomes,
        "holds": any(o is not False for o in outcomes),
        "margin": paired_interval(diffs) if len(diffs) == n else None,
    }
    if null.get("unequal_budget"):
        row["unequal_budget"] = null["unequal_budget"]
    return row


def _strongest(null_rows: list[dict]) -> dict:
    """The null closest to passing: one that holds, else the one whose paired margin's lower end is smallest."""

    def key(r):
        low = r["margin"]["low"] if r["margin"] else -math.inf
        return (not r["holds"], low)

    return min(null_rows, key=key)


def evaluate_claim(decl: Mapping, measured: Mapping[str, Any], scale: str) -> dict:
    """One claim's row of claims.json: declaration + measured values + computed verdict (module docstring)."""
    check_declaration(decl)
    measured = {k: _as_list(v) for k, v in measured.items()}
    names = criterion_names(decl["criterion"])
    for extra in ("refuted_if", "testable_if", "valid_if"):
        if decl.get(extra):
            names += [n for n in criterion_names(decl[extra]) if n not in names]
    nulls = declared_nulls(decl) if decl["kind"] == "headline" else []
    read = criterion_names(decl["criterion"])
    for null in nulls:
        not_read = [k for k in null["sub"] if k not in read]
        if not_read:
            raise ValueError(
                f"claim {decl['id']!r}, null {null['name']!r}: replaces {not_read}, which the criterion "
                f"{decl['criterion']!r} does not read"
            )
        names += [m for m in null["sub"].values() if m not in names]
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
    if verdict == "reproduced":
        reason = f"the criterion holds on every seed ({n})"
    elif verdict == "not_reproduced":
        reason = f"the criterion {'is refuted' if refuted else 'fails'} on every seed ({n})"
    else:
        reason = "the criterion is undefined (NaN) on a seed" if None in outcomes else "the seeds disagree"
    testable = True
    if decl.get("testable_if"):
        testable = all(o is True for o in _per_seed(decl["testable_if"], measured, n))
        if not testable and verdict == "reproduced":  # a premise holds back a reproduction, never a refutation
            verdict, reason = "inconclusive", "the criterion holds, but its premise (testable_if) does not"
    valid = True
    if decl.get("valid_if"):
        valid = all(o is True for o in _per_seed(decl["valid_if"], measured, n))
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
    if nulls:
        method_slack = _slacks(decl["criterion"], measured, n)
        null_rows = [_null_row(x, decl, measured, n, method_slack) for x in nulls]
        strongest = _strongest(null_rows)
        row["setting"] = decl["setting"]
        row["nulls"] = null_rows
        row["strongest_null"] = strongest["name"]
        if decl.get("family"):
            row["family"] = {k: list(v) for k, v in decl["family"].items()}
        if decl.get("deterministic"):
            row["deterministic"] = decl["deterministic"]
        if verdict == "reproduced":
            verdict, reason = _verdict_against_nulls(decl, null_rows, strongest, n, reason)
    if not valid:  # the numbers do not measure the method: neither a reproduction nor a refutation
        verdict, reason = (
            "inconclusive",
            (
                f"not a measurement of the method: its condition valid_if ({decl['valid_if']}) does not hold on every "
                f"seed, so the criterion's outcome ({reason}) says nothing either way"
            ),
        )
    row["verdict_reason"] = reason
    if refuted is not None:
        row["refuted_if"] = decl["refuted_if"]
        row["per_seed_refuted"] = refuted
    if decl.get("testable_if"):
        row["testable_if"] = decl["testable_if"]
        row["testable"] = testable
    if decl.get("valid_if"):
        row["valid_if"] = decl["valid_if"]
        row["valid"] = valid
    if decl.get("note"):
        row["note"] = decl["note"]
    row["verdict"] = CHECK_VERDICTS[verdict] if decl["kind"] == "check" else verdict
    return row


def _verdict_against_nulls(decl: Mapping, null_rows: list[dict], strongest: dict, n: int, reason: str):
    """A criterion that holds on every seed reads reproduced only if every null fails on every seed, every
    null had the method's budget, and the paired margin over the strongest null is beyond the noise: its
    95 % interval over seeds (or data draws) excludes zero. One draw cannot show that unless the claim's
    values carry no sampling noise (`deterministic`)."""
    holding = [r["name"] for r in null_rows if r["holds"]]
    if holding:
        return "inconclusive", f"{reason}, but also under the null(s) {holding}: the test cannot tell the effect"
    unequal = [r["name"] for r in null_rows if r.get("unequal_budget")]
    if unequal:
        return "inconclusive", f"{reason}, but the null(s) {unequal} did not get the method's budget"
    m = strongest["margin"]
    if m is None:
        return "inconclusive", f"{reason}, but the margin over the null {strongest['name']!r} is undefined"
    if n < 2 and not decl.get("deterministic"):
        return "inconclusive", f"{reason}, but from one draw: no interval over seeds can exclude the null"
    if m["low"] <= 0:
        return "inconclusive", (
            f"{reason} and fails under every null, but the paired margin over the strongest null "
            f"{strongest['name']!r} ({m['mean']:.4g}, 95 % interval [{m['low']:.4g}, {m['high']:.4g}]) includes zero"
        )
    where = "exact values" if n < 2 else f"95 % interval [{m['low']:.4g}, {m['high']:.4g}] over {n} seeds"
    return "reproduced", (
        f"{reason}, fails under every null ({len(null_rows)}), and beats the strongest "
        f"{strongest['name']!r} by {m['mean']:.4g} ({where})"
    )


def row_declaration(row: Mapping) -> dict:
    """The declaration a claims.json row carries (its claims.yaml entry after template expansion), without what
    its evaluation added; family nulls are left out since the declaration's `family` derives them."""
    decl = {k: v for k, v in row.items() if k in DECLARATION_KEYS}
    if "nulls" in decl:
        decl["nulls"] = [{k: v for k, v in x.items() if k in NULL_KEYS} for x in row["nulls"] if x["kind"] != "family"]
    decl.setdefault("evidence", [])
    return decl


def declarations_by_id(
    declaration: Mapping, ids: Sequence[str], rows: Mapping[str, Mapping] | None = None
) -> dict[str, dict]:
    """The expanded claims.yaml entry of each claim id of a run: a plain claim by its id, else a `for_each`
    template whose id pattern matches (the value read back from the id). Where several templates match one
    id (two templates of one prefix over different lists), the one whose expansion is the row's declaration
    (`rows`, where given) is taken, else the first. Ids that no entry declares are absent."""
    import re

    out = {
        c["id"]: {**c, "evidence": list(c.get("evidence", []))}
        for c in declaration["claims"]
        if not c.get("for_each") and c["id"] in ids
    }
    candidates: dict[str, list[dict]] = {}
    for c in declaration["claims"]:
        name = c.get("for_each")
        if name is None:
            continue
        head, tail = c["id"].split("{" + name + "}", 1)
        pattern = re.compile(re.escape(head) + "(?P<value>.+)" + re.escape(tail) + "$")
        for cid in ids:
            m = pattern.match(cid)
            if m and cid not in out:
                (e,) = expand_claims([c], {name: [m.group("value")]})
                candidates.setdefault(cid, []).append({**e, "evidence": list(e.get("evidence", []))})
    for cid, expansions in candidates.items():
        same = [e for e in expansions if rows and cid in rows and e == row_declaration(rows[cid])]
        out[cid] = (same or expansions)[0]
    return out


def recompute_claim(row: Mapping) -> dict:
    """Evaluate a claims.json row again from its own recorded values: the declaration it carries and the
    measured values per seed (null, i.e. NaN, stays NaN). Equal verdicts show they were computed, not written."""
    decl = row_declaration(row)
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
        try:
            check_declaration(c)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
        if c.get("for_each"):
            placeholder = "{" + c["for_each"] + "}"
            if placeholder not in c["id"]:
                raise ValueError(f"{path}: claim {c['id']!r} has for_each but its id lacks {placeholder}")
        else:
            for key in ("criterion", "refuted_if", "testable_if", "valid_if"):
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
            sub = lambda t: str(t).replace("{" + name + "}", str(value))  # noqa: E731
            if "nulls" in e:
                e["nulls"] = [
                    {**x, "name": sub(x["name"]), "sub": {sub(k): sub(v) for k, v in x["sub"].items()}}
                    for x in e["nulls"]
                ]
            if "family" in e:
                e["family"] = {sub(k): [sub(m) for m in v] for k, v in e["family"].items()}
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
        "schema_version": SCHEMA_VERSION,
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
    """metrics.json of a paper, for `dvc metrics show/diff`: a few numbers per paper, the verdict counts of its
    headline claims and of its checks (the same columns for every paper; per-claim and per-seed values stay in
    claims.json, and `make diff` compares them)."""
    out: dict = {
        "headline": {"reproduced": 0, "not_reproduced": 0, "inconclusive": 0, "total": 0},
        "checks": {"passed": 0, "failed": 0, "inconclusive": 0},
    }
    for c in doc["claims"]:
        out["headline" if c["kind"] == "headline" else "checks"][c["verdict"]] += 1
        out["headline"]["total"] += c["kind"] == "headline"
    return out


def write_claims(path: str | Path, doc: Mapping) -> None:
    """Validate, then write claims.json and, beside it, metrics.json (`headline_metrics`), atomically: an invalid
    document never reaches disk. The provenance gains the records of the paper's jobs (their hosts, GPUs and
    environments; `provenance.with_job_records`)."""
    doc = with_job_records(doc, path)
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
    if c.get("valid_if"):
        cell += f"; measured validly if `{c['valid_if']}`" + ("" if c.get("valid") else " (**not met**)")
    return cell


def strongest_null_cell(c: Mapping) -> str:
    """The strongest null of a headline row: its substitution, whether it holds, and the paired margin."""
    by_name = {x["name"]: x for x in c["nulls"]}
    x = by_name[c["strongest_null"]]
    sub = ", ".join(f"`{k}` → `{v}`" for k, v in x["sub"].items())
    held = sum(o is not False for o in x["per_seed"])
    outcome = f"holds on {held}/{len(x['per_seed'])} seeds" if held else "fails on every seed"
    m = x["margin"]
    margin = (
        "undefined"
        if m is None
        else (f"{m['mean']:.3g}" + (f" [{m['low']:.3g}, {m['high']:.3g}]" if m["n"] > 1 else " (one draw)"))
    )
    budget = "; **unequal budget**" if x.get("unequal_budget") else ""
    return f"{x['name']} ({x['kind']}; {len(c['nulls'])} nulls): {sub}; {outcome}; margin {margin}{budget}"


def claims_table_markdown(doc: Mapping) -> str:
    """The paper's headline claims as a markdown table, then its checks as a second one."""
    headline = [c for c in doc["claims"] if c["kind"] == "headline"]
    checks = [c for c in doc["claims"] if c["kind"] == "check"]
    lines = []
    if headline:
        lines += [
            "| claim | setting | paper | measured | criterion | strongest null (of all nulls) | verdict |",
            "|---|---|---|---|---|---|---|",
        ]
        for c in headline:
            paper = f"{c['paper_value']['value']} ({c['paper_value']['source']})"
            null = strongest_null_cell(c)
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
