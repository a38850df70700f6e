"""Which verdicts changed between two runs, with the metric values beside them and each side's provenance.

    python -m methods.common.diff A B        (make diff A=... B=...; icml25-diff A B)

A and B are each one of:
- a results folder of a run (`results`, `results_full`: `<dir>/<paper>/claims.json`);
- a published run folder (`docs/run`: `<dir>/<paper>.claims.json`);
- a git commit (or branch, tag), read from the published run committed there (`docs/run/` at that commit).

Claims are matched by paper and id. Printed: each side's provenance (commit, scale, host, packages that
differ, papers whose config digest differs), then every claim whose verdict differs (or that exists on one
side only) with its measured values on both sides and why it may have moved: each part of the claim's
definition that changed (criterion, noise band, premise, kind, setting, nulls, family, deterministic), and a
flag where the verdict moved while the measured values did not (the definition or the contract moved it).
`--all` lists claims whose values moved with an unchanged verdict as well.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from .claims import format_value
from .io import read_json
from .provenance import REPO_ROOT

PUBLISHED = "docs/run"


# what the comparison reads of a claims document; a file lacking one is named with the field, not a traceback
CLAIM_FIELDS = ("id", "verdict", "measured")
PROVENANCE_FIELDS = ("commit", "dirty", "scale", "host")


def checked_doc(doc, where: str) -> dict:
    """`doc` if it has every field the comparison reads (claims with id, verdict and measured values, each a
    summary with a mean; provenance, where present, with commit, dirty, scale, host); else SystemExit naming
    `where` and the missing field."""

    def missing(field: str):
        raise SystemExit(
            f"{where}: not a claims file this diff can read: it lacks {field}; compare results folders, "
            f"docs/run or git revisions made by `make reproduce` (rerun the paper's claims step to rewrite it)"
        )

    if not isinstance(doc, dict) or not isinstance(doc.get("claims"), list):
        missing("`claims` (a list)")
    for i, claim in enumerate(doc["claims"]):
        for field in CLAIM_FIELDS:
            if not isinstance(claim, dict) or field not in claim:
                missing(f"`claims[{i}].{field}`")
        for name, summary in claim["measured"].items():
            if not isinstance(summary, dict) or not {"mean", "std", "values"} <= set(summary):
                missing(f"`claims[{i}].measured.{name}` as {{mean, std, values}}")
    prov = doc.get("provenance")
    if prov is not None:
        for field in PROVENANCE_FIELDS:
            if not isinstance(prov, dict) or field not in prov:
                missing(f"`provenance.{field}`")
        if not isinstance(prov["host"], dict) or "cpu" not in prov["host"]:
            missing("`provenance.host.cpu`")
    return doc


def _read(path: Path) -> dict:
    try:
        return checked_doc(read_json(path), str(path))
    except (OSError, ValueError) as e:
        raise SystemExit(f"{path}: cannot be read as JSON ({e})") from None


def load_run(spec: str, root: Path = REPO_ROOT) -> dict[str, dict]:
    """{paper: claims document} of a run given as a results folder, a published folder or a git revision."""
    if not spec or not spec.strip():
        raise SystemExit(
            "make diff: A or B is empty; give each a results folder (results), a published run (docs/run) or a "
            "git revision, e.g. `make diff A=HEAD~3 B=results`"
        )
    path = Path(spec)
    if path.is_dir():
        nested = {p.parent.name: _read(p) for p in sorted(path.glob("*/claims.json"))}
        flat = {p.name.removesuffix(".claims.json"): _read(p) for p in sorted(path.glob("*.claims.json"))}
        if nested or flat:
            return nested or flat
        raise SystemExit(f"{spec}: a folder with no <paper>/claims.json or <paper>.claims.json in it")
    listing = subprocess.run(
        ["git", "-C", str(root), "ls-tree", "--name-only", f"{spec}:{PUBLISHED}"], capture_output=True, text=True
    )
    if listing.returncode != 0:
        raise SystemExit(
            f"{spec}: neither a folder nor a git revision with a published run ({PUBLISHED}/); "
            f"git says: {listing.stderr.strip()}"
        )
    docs = {}
    for name in listing.stdout.split():
        if name.endswith(".claims.json"):
            text = subprocess.run(
                ["git", "-C", str(root), "show", f"{spec}:{PUBLISHED}/{name}"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            where = f"{spec}:{PUBLISHED}/{name}"
            try:
                docs[name.removesuffix(".claims.json")] = checked_doc(json.loads(text), where)
            except ValueError as e:
                raise SystemExit(f"{where}: cannot be read as JSON ({e})") from None
    if not docs:
        raise SystemExit(f"{spec}: {PUBLISHED}/ at this revision holds no claims file")
    return docs


def _provenance_lines(label: str, spec: str, docs: dict[str, dict]) -> list[str]:
    provs = [d.get("provenance") for d in docs.values() if d.get("provenance")]
    if not provs:
        return [f"- **{label}** `{spec}`: no provenance recorded ({len(docs)} papers)"]
    commits = sorted({f"{(p['commit'] or 'unknown')[:12]}{' (dirty)' if p['dirty'] else ''}" for p in provs})
    hosts = sorted({p["host"]["cpu"] for p in provs})
    scales = sorted({p["scale"] for p in provs})
    # the machines of the jobs that computed (recorded by each job; on a cluster not the claims job's node)
    jobs = [j["host"] for p in provs for j in p.get("jobs") or []]
    machines = sorted({f"{h['cpu']}" + (f" + {h['gpu']}" if h.get("gpu") else "") for h in jobs})
    return [
        f"- **{label}** `{spec}`: {len(docs)} papers; commit {', '.join(commits)}; scale {', '.join(scales)}; "
        f"host {'; '.join(hosts)}" + (f"; jobs on {'; '.join(machines)}" if machines else "")
    ]


def _package_changes(a: dict[str, dict], b: dict[str, dict]) -> list[str]:
    def versions(docs):
        out = {}
        for d in docs.values():
            out.update((d.get("provenance") or {}).get("packages", {}))
        return out

    va, vb = versions(a), versions(b)
    return [f"{k} {va.get(k)} → {vb.get(k)}" for k in sorted(set(va) | set(vb)) if va.get(k) != vb.get(k)]


DEFINITION_KEYS = (
    "criterion",
    "refuted_if",
    "testable_if",
    "valid_if",
    "kind",
    "setting",
    "nulls",
    "family",
    "deterministic",
)


def definition(row: dict) -> dict:
    """The parts of a claims.json row that define the claim's test, in one form for both contract versions
    (a version-1 row's single `null` mapping reads as one null)."""
    out = {k: row.get(k) for k in DEFINITION_KEYS}
    if "null" in row and row.get("nulls") is None:
        out["nulls"] = [dict(row["null"])]
    elif out["nulls"] is not None:
        out["nulls"] = [dict(x["sub"]) for x in row["nulls"] if x.get("kind") != "family"]
    return out


def definition_changes(x: dict | None, y: dict | None) -> list[str]:
    """Names of the definition parts that differ between two rows of the same claim."""
    if x is None or y is None:
        return []
    dx, dy = definition(x), definition(y)
    return [k for k in DEFINITION_KEYS if dx[k] != dy[k]]


def why_moved(r: dict) -> str:
    """Why a claim's verdict may have moved: the changed definition parts, and a flag when the values did not
    move; a version-2 row adds its own reason."""
    parts = []
    if r["definition_changed"]:
        parts.append("definition changed: " + ", ".join(r["definition_changed"]))
    if r["values_unchanged"] and r["verdict_a"] != r["verdict_b"]:
        parts.append("**verdict moved with identical measured values**")
    if r["b"] is not None and r["b"].get("verdict_reason"):
        parts.append(r["b"]["verdict_reason"])
    return "; ".join(parts) or "measured values moved"


def _values_moved(x: dict, y: dict) -> bool:
    """Whether a metric both rows read has other values (a metric only one side reads is a definition change)."""
    shared = set(x["measured"]) & set(y["measured"])
    return not shared or any(x["measured"][k]["values"] != y["measured"][k]["values"] for k in shared)


def _config_changes(a: dict[str, dict], b: dict[str, dict]) -> list[str]:
    digest = lambda d: (d.get("provenance") or {}).get("config_digest")  # noqa: E731
    return [p for p in sorted(set(a) & set(b)) if digest(a[p]) != digest(b[p])]


def _values(claim: dict | None) -> str:
    if claim is None:
        return "—"
    return "<br>".join(f"`{k}` = {format_value(v)}" for k, v in claim["measured"].items())


def compare(a: dict[str, dict], b: dict[str, dict], show_all: bool = False) -> list[dict]:
    """Rows {paper, id, kind, verdict_a, verdict_b, a, b} for claims whose verdict differs (or whose values
    moved, with show_all), in paper order."""
    rows = []
    for paper in sorted(set(a) | set(b)):
        ca = {c["id"]: c for c in a.get(paper, {}).get("claims", [])}
        cb = {c["id"]: c for c in b.get(paper, {}).get("claims", [])}
        for cid in list(ca) + [i for i in cb if i not in ca]:
            x, y = ca.get(cid), cb.get(cid)
            va, vb = (x or {}).get("verdict"), (y or {}).get("verdict")
            moved = x is not None and y is not None and _values_moved(x, y)
            changed = definition_changes(x, y)
            if va != vb or (show_all and (moved or changed)):
                rows.append(
                    {
                        "paper": paper,
                        "id": cid,
                        "kind": (x or y).get("kind", "?"),
                        "verdict_a": va or "absent",
                        "verdict_b": vb or "absent",
                        "a": x,
                        "b": y,
                        "definition_changed": changed,
                        "values_unchanged": x is not None and y is not None and not moved,
                    }
                )
    return rows


def render(spec_a: str, spec_b: str, a: dict[str, dict], b: dict[str, dict], show_all: bool = False) -> str:
    rows = compare(a, b, show_all)
    lines = ["# Runs compared", "", *_provenance_lines("A", spec_a, a), *_provenance_lines("B", spec_b, b)]
    changes = _package_changes(a, b)
    lines += [f"- packages that differ: {', '.join(changes) if changes else 'none'}"]
    configs = _config_changes(a, b)
    lines += [f"- papers whose config digest differs: {', '.join(configs) if configs else 'none'}", ""]
    flips = sum(r["verdict_a"] != r["verdict_b"] for r in rows)
    lines += [
        f"{flips} claim(s) changed verdict" + (f"; {len(rows) - flips} more moved in value" if show_all else "") + ".",
        "",
    ]
    if rows:
        lines += [
            "| paper | claim | kind | A | B | why | A measured | B measured |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            lines.append(
                f"| `{r['paper']}` | {r['id']} | {r['kind']} | {r['verdict_a']} | {r['verdict_b']} "
                f"| {why_moved(r)} | {_values(r['a'])} | {_values(r['b'])} |"
            )
    return "\n".join(lines)


def moves_markdown(before: dict | None, after: dict) -> str:
    """A paper's headline claims whose verdict moved since the previous published run, with why, for its README."""
    if before is None:
        return "No earlier published run of this paper."
    rows = [r for r in compare({"p": before}, {"p": after}) if r["kind"] == "headline"]
    commit = ((before.get("provenance") or {}).get("commit") or "unknown")[:7]
    if not rows:
        return f"No headline verdict moved since the previous published run (commit `{commit}`)."
    lines = [
        f"Headline verdicts that moved since the previous published run (commit `{commit}`):",
        "",
        "| claim | before | after | why |",
        "|---|---|---|---|",
    ]
    lines += [f"| {r['id']} | {r['verdict_a']} | {r['verdict_b']} | {why_moved(r)} |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="results folder, published run folder, or git revision")
    ap.add_argument("b", help="results folder, published run folder, or git revision")
    ap.add_argument("--all", action="store_true", help="also list claims whose values moved with the same verdict")
    args = ap.parse_args(argv)
    print(render(args.a, args.b, load_run(args.a), load_run(args.b), args.all))
    return 0


if __name__ == "__main__":
    sys.exit(main())
