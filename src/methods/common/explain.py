"""How one claim's verdict follows from its numbers, in words.

    icml25-explain PAPER CLAIM [--run results|docs/run|<git revision>]     (make explain PAPER=... CLAIM=...)

Prints the claim's statement and source, its criterion with each seed's values put in, each null's
substitution with its outcome per seed and its paired margin, the premise with its values, and the rule of
`methods.common.claims` that gives the verdict. The run defaults to `results` when it holds the paper, else
to the published run (`docs/run`).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

from . import claims as C
from .diff import PUBLISHED, load_run


def _fmt(v: float | None) -> str:
    return "NaN" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.4g}"


def substituted(expr: str, values: dict[str, float | None]) -> str:
    """The expression with each metric name replaced by its value."""
    names = sorted(C.criterion_names(expr), key=len, reverse=True)
    if not names:
        return expr
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    return pattern.sub(lambda m: _fmt(values[m.group(1)]), expr)


def _seed_values(row: dict, i: int, sub: dict | None = None) -> dict[str, float | None]:
    out = {}
    for name, m in row["measured"].items():
        source = row["measured"][(sub or {}).get(name, name)]["values"]
        out[name] = source[i if len(source) > 1 else 0]
    return out


def _n(row: dict) -> int:
    return max(len(m["values"]) for m in row["measured"].values())


def _outcome(o: bool | None) -> str:
    return {True: "holds", False: "fails", None: "undefined"}[o]


def explain(row: dict) -> str:
    """The explanation of one claims.json row (either kind)."""
    again = C.recompute_claim(row)
    n = _n(row)
    lines = [f"{row['id']} ({row['kind']}" + (f", setting {row['setting']})" if row.get("setting") else ")")]
    lines.append(f"  statement: {row['statement']}")
    if row.get("paper_value"):
        lines.append(f"  paper: {row['paper_value']['value']} ({row['paper_value']['source']})")
    lines.append(f"  criterion: {row['criterion']}")
    for i in range(n):
        lines.append(
            f"    seed {i}: {substituted(row['criterion'], _seed_values(row, i))} -> {_outcome(row['per_seed'][i])}"
        )
    if row.get("refuted_if"):
        lines.append(f"  refuted if: {row['refuted_if']}")
        for i in range(n):
            lines.append(
                f"    seed {i}: {substituted(row['refuted_if'], _seed_values(row, i))} "
                f"-> {_outcome(row['per_seed_refuted'][i])}"
            )
    if row.get("testable_if"):
        lines.append(f"  premise (testable_if): {row['testable_if']} -> {'met' if row['testable'] else 'NOT met'}")
        for i in range(n):
            lines.append(f"    seed {i}: {substituted(row['testable_if'], _seed_values(row, i))}")
    if row.get("valid_if"):
        met = "met" if row["valid"] else "NOT met: the values do not measure the method"
        lines.append(f"  measured validly if (valid_if): {row['valid_if']} -> {met}")
        for i in range(n):
            lines.append(f"    seed {i}: {substituted(row['valid_if'], _seed_values(row, i))}")
    for x in row.get("nulls", []):
        sub = ", ".join(f"{k} -> {v}" for k, v in x["sub"].items())
        strongest = " (strongest)" if x["name"] == row.get("strongest_null") else ""
        tie = ", self-tie" if x["self_tie"] else ""
        lines.append(f"  null {x['name']}{strongest} [{x['kind']}{tie}]: {sub}")
        for i in range(n):
            values = _seed_values(row, i, x["sub"])
            lines.append(f"    seed {i}: {substituted(row['criterion'], values)} -> {_outcome(x['per_seed'][i])}")
        m = x["margin"]
        if m is not None:
            interval = f"95 % interval [{_fmt(m['low'])}, {_fmt(m['high'])}]" if m["n"] > 1 else "one draw"
            lines.append(f"    paired margin of the method over it: {_fmt(m['mean'])} ({interval})")
        if x.get("unequal_budget"):
            lines.append(f"    unequal budget: {x['unequal_budget']}")
    if row.get("deterministic"):
        lines.append(f"  deterministic: {row['deterministic']}")
    lines.append(f"  verdict: {row['verdict']} - {row['verdict_reason']}")
    if again["verdict"] != row["verdict"]:
        lines.append(f"  WARNING: recomputed from its values this row reads {again['verdict']}, not {row['verdict']}")
    if row.get("note"):
        lines.append(f"  note: {row['note']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paper", help="paper slug, e.g. timemcl")
    ap.add_argument("claim", help="claim id (see the paper's claims table)")
    ap.add_argument(
        "--run", help="results folder, published run folder or git revision (default: results, else docs/run)"
    )
    args = ap.parse_args(argv)
    run = args.run or ("results" if Path("results", args.paper, "claims.json").exists() else PUBLISHED)
    docs = load_run(run)
    if args.paper not in docs:
        raise SystemExit(f"{run}: no claims of paper {args.paper!r}; papers there: {sorted(docs)}")
    rows = {c["id"]: c for c in docs[args.paper]["claims"]}
    if args.claim not in rows:
        raise SystemExit(f"{run}: paper {args.paper!r} has no claim {args.claim!r}; claims: {sorted(rows)}")
    if docs[args.paper].get("schema_version") != C.SCHEMA_VERSION:
        raise SystemExit(f"{run}: {args.paper} was written by another claims contract; rerun the paper to explain it")
    print(f"{args.paper} in {run}")
    print(explain(rows[args.claim]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
