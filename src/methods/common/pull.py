"""`make pull`: fetch shared results with DVC, but only those made with this checkout's config and code.

dvc.lock records, for every stage, the config section (DVC `params`) and the hash of every code
file that made its outputs. Pulled files carry no such record for Snakemake: after `snakemake
--touch` they look current whatever config they were made with. So before pulling, each stage
is compared with this checkout (`dvc status`): a stage whose params, code or command changed is
not pulled and not marked current (nor is any stage downstream of it); Snakemake recomputes them.
What was refused, and why, is printed; the exit status is 1 when anything was refused.

  python -m methods.common.pull [--remote NAME] [STAGE ...]     (make pull [REMOTE=...] [TARGETS=...])
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]


def _bin(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def _run(cmd: list[str], root: Path, capture: bool = False) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(cmd, cwd=root, env=env, text=True, capture_output=capture)
    if proc.returncode != 0:
        detail = f"\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}" if capture else ""
        raise SystemExit(f"`{' '.join(cmd)}` failed (exit {proc.returncode}){detail}")
    return proc


def stage_graph(root: Path) -> tuple[dict, dict[str, set[str]]]:
    """dvc.yaml's stages and, for each, the stages whose outputs it reads."""
    stages = yaml.safe_load((root / "dvc.yaml").read_text())["stages"]
    owner = {out: name for name, st in stages.items() for out in st.get("outs", [])}
    upstream = {name: {owner[d] for d in st.get("deps", []) if d in owner and owner[d] != name}
                for name, st in stages.items()}
    return stages, upstream


def mismatches(status: dict, own_outs_of_others: set[str]) -> list[str]:
    """Why a stage's recorded results do not belong to this checkout, from `dvc status --json`.

    Outputs that are merely absent (not pulled yet) are no mismatch; nor are upstream outputs that
    are absent (they are pulled in the same run).
    """
    why = []
    for entry in status:
        if isinstance(entry, str):  # "changed command", "always changed"
            why.append(entry)
            continue
        for path, change in entry.get("changed deps", {}).items():
            if isinstance(change, dict):  # params file: {key: "modified" | "new" | "deleted"}
                why += [f"config {path}:{key} {state} since the results were made" for key, state in change.items()]
            elif not (change == "deleted" and path in own_outs_of_others):
                why.append(f"{path} {change} since the results were made")
        if entry.get("changed command"):
            why.append("its command changed")
    return why


def plan(root: Path, targets: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """(stages to pull, {refused stage: reasons}) for the targets (all locked stages when empty)."""
    stages, upstream = stage_graph(root)
    lock_path = root / "dvc.lock"
    locked = set(yaml.safe_load(lock_path.read_text())["stages"]) if lock_path.exists() else set()
    unknown = [t for t in targets if t not in stages]
    if unknown:
        raise SystemExit(f"make pull: unknown stage(s) {unknown} in TARGETS; dvc.yaml has {sorted(stages)}")
    wanted: list[str] = []

    def add(name):
        for up in sorted(upstream[name]):
            add(up)
        if name not in wanted:
            wanted.append(name)

    for t in targets or sorted(locked):
        add(t)
    refused: dict[str, list[str]] = {}
    missing = [s for s in wanted if s not in locked]
    for s in missing:
        refused[s] = ["dvc.lock has no record of it: nobody pushed its results for this commit"]
    outs_of_others = {o for st in stages.values() for o in st.get("outs", [])}
    check = [s for s in wanted if s in locked]
    if check:
        proc = _run([_bin("dvc"), "status", "--json", *check], root, capture=True)
        status = json.loads(proc.stdout or "{}")
        for s in check:
            why = mismatches(status.get(s, []), outs_of_others)
            if why:
                refused[s] = why
    for s in wanted:  # downstream of a refused stage: its inputs will be recomputed, so must it
        bad = sorted(u for u in upstream[s] if u in refused)
        if bad and s not in refused:
            refused[s] = [f"it reads the outputs of {', '.join(bad)}, which will be recomputed"]
    return [s for s in wanted if s not in refused], refused


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--remote", "-r", default="", help="DVC remote (default: the configured default)")
    ap.add_argument("--root", type=Path, default=Path.cwd())
    ap.add_argument("stages", nargs="*", help="dvc.yaml stages (papers, shared substrates, report); all when empty")
    args = ap.parse_args(argv)
    root = args.root
    pull, refused = plan(root, args.stages)
    for s, why in refused.items():
        print(f"make pull: not pulling {s}: " + "; ".join(why) + f". `snakemake {s}` recomputes it.",
              file=sys.stderr)
    if pull:
        _run([_bin("dvc"), "pull", *(["-r", args.remote] if args.remote else []), *pull], root)
        # DVC restores files in arbitrary order and mtime: mark what was pulled as current for Snakemake.
        everything = not refused and not args.stages
        targets = [] if everything else [s for s in pull if s != "report" and (root / "workflow" / "rules" / f"{s}.smk").exists()]
        if everything or targets:
            _run([_bin("snakemake"), "--touch", "--cores", "1", *(["--", *targets] if targets else [])], root)
        print(f"make pull: pulled and marked current: {', '.join(pull)}", file=sys.stderr)
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
